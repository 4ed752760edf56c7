"""OlympiadBench's prompt, written from each row: OpenCompass's ``OlympiadBenchTemplate`` (a HUMAN turn) and
``OlympiadBenchRawTemplate`` (one user message sent as written).

The instruction depends on the row's ``language`` (``'Chinese'`` or anything else, read as English), ``subject``
(``'Math'``, else physics), ``question_type`` (``'Theorem proof'`` asks for a proof), ``answer_type`` (what kind of
value each answer is), ``is_multiple_answer`` and ``unit``; the problem goes after it and a step-by-step request
closes it. The wording is data (one :class:`Phrasing` per language); one function assembles it. Missing columns get
the reference's defaults (English, Math, an open problem, one answer, no unit).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from promptweave.errors import DataError
from promptweave.prompt.row_template import Row, RowTemplate, replace_in_turn

# answer kinds, in the order a compound answer_type (``Numerical-Expression``) is matched against
_KINDS = ("Numerical", "Expression", "Equation", "Interval")

SUBJECT, KIND, BOX, UNIT_NOTE = "subject", "kind", "box", "unit_note"  # slots of the phrasing's sentences


@dataclass(frozen=True)
class Phrasing:
    """One language's wording. Sentences are tuples of literal text and slot names (never format strings: the
    text holds ``\\boxed{}``)."""

    subjects: tuple[str, str]  # (mathematics, physics)
    kinds: Mapping[str, str]  # answer kind -> how it is named
    proof: tuple[str, ...]
    open_ended: tuple[str, ...]
    one_answer: tuple[str, ...]  # the answer-type sentence (slot KIND), one answer
    same_kinds: tuple[str, ...]  # several answers of one kind
    mixed_kinds: tuple[str, ...]  # several answers of different kinds, KIND being the joined list
    kinds_joiner: str
    boxed: tuple[str, str]  # (one answer, several answers)
    unit_mark: str  # after the box when the answer has a unit
    unit_note: str
    closing: str  # after the problem


ENGLISH = Phrasing(
    subjects=("Math", "Physics"),
    kinds={"Numerical": "a numerical value", "Expression": "an expression", "Equation": "an equation",
           "Interval": "an interval"},
    proof=("The following is a theorem proving problem from an International ", SUBJECT, " competition. Please "
           "use logical reasoning and common theorems to prove the proposition in the problem according to the "
           "given requirements. Please use LaTeX format to represent the variables and formulas used in the proof."),
    open_ended=("The following is an open-ended problem from an International ", SUBJECT, " competition. ", KIND,
                "Please calculate the answer according to the given requirements and the information provided. "
                "Please use LaTeX format to represent the variables and formulas used in the solution process and "
                'results. Please end your solution with "So the final answer is ', BOX, '." and give the result '
                "explicitly", UNIT_NOTE, "."),
    one_answer=("The answer of The problem should be ", KIND, ". "),
    same_kinds=("The problem has multiple answers, each of them should be ", KIND, ". "),
    mixed_kinds=("The problem has multiple answers, with the answers in order being ", KIND, ". "),
    kinds_joiner=", ",
    boxed=("\\boxed{answer}", "\\boxed{multiple answers connected with commas}"),
    unit_mark="(unit)",
    unit_note=", note that the unit of the answer should not be included in \\boxed{}",
    closing="\nPlease reason step by step, and put your final answer within \\boxed{}.",
)

CHINESE = Phrasing(
    subjects=("数学", "物理"),
    kinds={"Numerical": "数值", "Expression": "表达式", "Equation": "方程", "Interval": "区间"},
    proof=("以下是中国", SUBJECT, "竞赛中的证明题。请根据题目的要求，运用逻辑推理及常用定理证明题目中的命题。"
           "证明过程中使用的变量和公式请使用LaTeX格式表示。"),
    open_ended=("以下是中国", SUBJECT, "竞赛中的解答题", KIND, "。请根据题目的要求和所提供的信息计算得出答案。"
                "解答过程和结果中使用的变量和公式请使用LaTeX格式表示。请在最后以\"所以最终答案是", BOX,
                "。\"显式给出结果", UNIT_NOTE, "。"),
    one_answer=("，答案类型为", KIND),
    same_kinds=("，题目有多个答案，答案类型均为", KIND),
    mixed_kinds=("，题目有多个答案，答案类型分别为", KIND),
    kinds_joiner="、",
    boxed=("\\boxed{答案}", "\\boxed{用英文逗号连接的多个答案}"),
    unit_mark="(单位)",
    unit_note="，注意答案的单位不要放在\\boxed{}中",
    closing="\n请通过逐步推理来解答问题，并把最终答案放置于\\boxed{}中。",
)


class AnswerTypeError(ValueError):
    """An ``answer_type`` that names none of the answer kinds (the reference raises ValueError there too)."""


def _join(sentence: tuple[str, ...], slots: Mapping[str, str]) -> str:
    return "".join(slots[part] if part in slots else part for part in sentence)


def answer_kind(answer_type: str, words: Phrasing) -> str:
    """How one answer's kind is named: the part before the first ``-``, matched against the kinds in order."""
    head = answer_type.split("-", 1)[0]
    for kind in _KINDS:
        if kind in head:
            return words.kinds[kind]
    raise AnswerTypeError(answer_type)


def answer_type_sentence(answer_type: str, words: Phrasing, multiple: bool) -> str:
    """What the instruction says about the answers' kinds ('' where a human grades them, or for tuples)."""
    if "Need_human_evaluate" in answer_type or "Tuple" in answer_type:
        return ""
    if not multiple:
        return _join(words.one_answer, {KIND: answer_kind(answer_type, words)})
    kinds = [answer_kind(part, words) for part in answer_type.split(",")] if "," in answer_type \
        else [answer_kind(answer_type, words)]
    if len(set(kinds)) == 1:
        return _join(words.same_kinds, {KIND: kinds[0]})
    return _join(words.mixed_kinds, {KIND: words.kinds_joiner.join(kinds)})


def instruction(language: Any, subject: Any, question_type: Any, answer_type: Any, multiple: Any,
                unit: Any) -> tuple[str, str]:
    """(text before the problem, text after it); the problem goes between, on a line of its own.

    Raises :class:`AnswerTypeError` for an open problem whose ``answer_type`` names no answer kind."""
    words = CHINESE if language == "Chinese" else ENGLISH
    slots = {SUBJECT: words.subjects[0] if subject == "Math" else words.subjects[1]}
    if question_type == "Theorem proof":
        head = _join(words.proof, slots)
    else:
        if not isinstance(answer_type, str):
            raise AnswerTypeError(answer_type)
        box = words.boxed[1] if multiple else words.boxed[0]
        slots[KIND] = answer_type_sentence(answer_type, words, bool(multiple))
        slots[BOX] = box + words.unit_mark if unit else box
        slots[UNIT_NOTE] = words.unit_note if unit else ""
        head = _join(words.open_ended, slots)
    return head + "\n", "\n" + words.closing


_DEFAULTS = {"problem": "", "language": "English", "subject": "Math", "question_type": "", "answer_type": "",
             "is_multiple_answer": False, "unit": ""}


def row_instruction(row: Row) -> tuple[str, str]:
    """:func:`instruction` for a row, with the reference's defaults for missing columns; a typed error naming the
    value when the row's answer_type names no kind."""
    get = {k: row.get(k, d) for k, d in _DEFAULTS.items()}
    try:
        return instruction(get["language"], get["subject"], get["question_type"], get["answer_type"],
                           get["is_multiple_answer"], get["unit"])
    except AnswerTypeError as exc:
        raise DataError(f"answer_type {exc.args[0]!r} names no answer kind, so OlympiadBench's instruction cannot "
                        "be written (OpenCompass fails on this row too)", field="answer_type", value=exc.args[0],
                        expected="Numerical, Expression, Equation or Interval (optionally '-…', comma-separated "
                        "for several answers), Tuple or Need_human_evaluate") from None


class OlympiadBenchTemplate(RowTemplate):
    """OpenCompass's ``OlympiadBenchTemplate``: one HUMAN turn, filled as a ``{prompt}`` turn is (the instruction,
    then the problem, then the answer column's placeholder replaced by the generation token)."""

    role = "HUMAN"
    shown = "{prompt}"

    def text(self, row: Row) -> str:
        head, tail = row_instruction(row)
        values: dict[str, Any] = {"prompt": head + "{problem}" + tail, "problem": row.get("problem", "")}
        if self.output_column is not None:
            values[self.output_column] = self.output_token
        # the turn is filled name by name: the instruction, then the problem into it, then the answer column's
        # placeholder (anywhere, the problem's text included) by the generation token
        return replace_in_turn("{prompt}", values)

    def stand_in_values(self) -> dict[str, Any]:
        return dict(_STAND_IN)


class OlympiadBenchRawTemplate(RowTemplate):
    """OpenCompass's ``OlympiadBenchRawTemplate``: one user message holding the instruction with the problem in
    place, sent to chat APIs as written (like a ``RawPromptTemplate``)."""

    role = "HUMAN"
    shown = "{problem}"
    raw_messages = True

    def text(self, row: Row) -> str:
        head, tail = row_instruction(row)
        return head + str(row.get("problem", "")) + tail

    def stand_in_values(self) -> dict[str, Any]:
        return dict(_STAND_IN)


_STAND_IN = {"language": "English", "subject": "Math", "question_type": "Open-ended", "answer_type": "Numerical",
             "is_multiple_answer": False, "unit": ""}
