"""GAOKAO-Bench: its loader (JSON exam papers) and the objective questions' scoring: answer letters pulled from
the reply by question type, scored per blank.

Golds are lists (one entry per sub-question). The letters read from a reply:

- ``single_choice``: the last A-D in the reply;
- ``multi_question_choice``: the letters after each ``【答案】`` when there are exactly as many markers as
  sub-questions, else the first capitals of the reply, up to the number of sub-questions;
- ``multi_choice``: all A-D after the first ``【答案】`` (whitespace removed; a marker at the very start is not
  taken, as the reference), else those in the last 10 characters, joined into one answer;
- ``five_out_of_seven``: the first five A-G.

A reply giving the wrong number of answers scores as all wrong. Each blank is worth 1 (``multi_choice``: 2 for
the exact letters, 1 when every letter given is in the gold, e.g. a subset). ``score`` = points / possible ×100. Subjective types
(``cloze``, ``subjective``, ``correction``) need a judge, so they report ``score`` 0, as the reference does.
"""
from __future__ import annotations

import re
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need, rows
from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths

QUESTION_TYPES = ("single_choice", "multi_choice", "multi_question_choice", "five_out_of_seven", "cloze",
                  "subjective", "correction")
SCORED = QUESTION_TYPES[:4]
_ANSWER_MARK = "【答案】"


def extract_answers(reply: str, question_type: str, n_blanks: int | None = None) -> list[str]:
    """The answers a reply gives, for one question of ``question_type`` (see the module doc)."""
    if question_type == "single_choice":
        found = re.findall(r"[A-D]", reply)
        return found[-1:]
    if question_type == "multi_question_choice":
        n = n_blanks or 0
        marked = re.findall(r"【答案】\s*[:：]*\s*[A-Z]", reply)
        if len(marked) == n:
            return [re.findall(r"[A-Z]", m)[0] for m in marked]
        return re.findall(r"[A-Z]", reply)[:n]
    if question_type == "multi_choice":
        flat = re.sub(r"\s+", "", reply)
        at = flat.find(_ANSWER_MARK)
        tail = flat[at:] if at > 0 else flat[-10:]
        letters = "".join(re.findall(r"[A-D]", tail))
        return [letters] if letters else []
    if question_type == "five_out_of_seven":
        return re.findall(r"[A-G]", reply)[:5]
    return []


def _as_blanks(ref: Any) -> list[str]:
    return [str(r) for r in ref] if isinstance(ref, (list, tuple)) else [str(ref)]


class GaokaoBenchEvaluator(Evaluator):
    name = "GaokaoBenchEvaluator"

    def __init__(self, question_type: str, **kw: Any) -> None:
        super().__init__(**kw)
        if question_type not in QUESTION_TYPES:
            raise EvaluationError("unknown GAOKAO-Bench question type", field="evaluator.question_type",
                                  value=question_type, expected=", ".join(QUESTION_TYPES))
        self.question_type = question_type

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        if self.question_type not in SCORED:
            return Scores({"score": 0.0}, [None] * len(predictions))
        got = possible = 0
        ok, details = [], []
        for pred, ref in zip(predictions, references):
            blanks = _as_blanks(ref)
            answers = extract_answers(str(pred), self.question_type, len(blanks))
            if len(answers) != len(blanks):
                answers = ["Z"] * len(blanks)
            right = []
            for a, b in zip(answers, blanks):
                if self.question_type == "multi_choice":
                    possible += 2
                    if a == b:
                        got += 2
                    elif all(letter in b for letter in a):
                        got += 1
                else:
                    possible += 1
                    got += a == b
                right.append(a == b)
            ok.append(all(right))
            details.append({"pred": answers, "refr": blanks, "is_correct": all(right)})
        return Scores({"score": 100 * got / possible if possible else 0.0}, ok, details)


def _for_type(question_type: str) -> type:
    """The reference registers one name per question type; each is the evaluator with that type fixed."""

    class Fixed(GaokaoBenchEvaluator):
        name = f"GaokaoBenchEvaluator_{question_type}"

        def __init__(self, **kw: Any) -> None:
            super().__init__(question_type=question_type, **kw)

    Fixed.__name__ = Fixed.__qualname__ = f"GaokaoBenchEvaluator_{question_type}"
    return Fixed


BY_TYPE: dict[str, type] = {f"GaokaoBenchEvaluator_{t}": _for_type(t) for t in QUESTION_TYPES}


# the suite's entries in the compat registries (compat/suites.py)


def gaokao_bench(ctx: LoadContext, path: str, filename: str, name: str) -> Splits:
    """``<path><filename>`` (plain concatenation, as the reference joins them): a JSON paper whose
    ``example`` list holds the questions."""
    f = ctx.concat(path, filename)
    data = json_file(f)
    if not isinstance(data, dict) or not isinstance(data.get("example"), list):
        raise ctx.fail("expected a JSON object with an 'example' list", file=f)
    return rows(((f"example[{i}]", dict(need(ctx, ex, (), file=f, where=f"example[{i}]")))
                 for i, ex in enumerate(data["example"])), f)


EVALUATORS: dict[str, type] = dict(BY_TYPE)
LOADERS = {
    "GaokaoBenchDataset": gaokao_bench,
}
