"""AGIEval: its loader (``AGIEvalDataset_v2``) and its cloze scoring: its own answer extraction and its (older,
stricter) MATH-style equivalence."""
from __future__ import annotations

import re
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.evaluate import math_equiv
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths, pct


def remove_few_shot_prefix(s: str) -> str:
    for prefix in ("The answer is therefore", "答案是"):
        if s.startswith(prefix):
            s = s[len(prefix):].strip()
        elif prefix in s:
            s = s[s.rfind(prefix) + len(prefix):].strip()
    return s


def _unbox(s: str | None) -> str | None:
    left = "\\boxed{"
    if s is None or not s.startswith(left) or not s.endswith("}"):
        return None
    answer = s[len(left):-1]
    return answer.split("=")[-1].lstrip(" ") if "=" in answer else answer


def parse_math_answer(raw: str) -> str | None:
    """The answer of a free-form reply: the last ``\\boxed{}``, else the last ``$...$``, else what follows the last
    '=', else the last number (for any part holding '=', only the right-hand side)."""
    raw = remove_few_shot_prefix(raw)
    if "\\boxed" in raw:
        return _unbox(math_equiv.last_boxed_only_string(raw))
    found = re.findall(r"\$(.*)\$", raw)
    answer = found[-1] if found else None
    if answer is not None and "=" in answer:
        answer = answer.split("=")[-1].lstrip(" ")
    if answer:
        return answer
    if "=" in raw:
        last = raw.split("=")[-1].lstrip(" ").rstrip(".")
        return last.split("\\n")[0] if "\\n" in last else last
    nums = re.findall(r"(?:\$)?\d+(?:\.\d+)?(?![\w\d])", raw)
    return nums[-1] if nums else None


def fix_a_slash_b(s: str) -> str:
    try:
        return math_equiv.fix_a_slash_b(s)
    except ValueError:  # AGIEval's version keeps the text where the MATH one gives up
        return s


def _strip(s: str) -> str:
    s = s.replace("\n", "").replace("\\!", "").replace("\\\\", "\\").replace("tfrac", "frac").replace("dfrac", "frac")
    s = s.replace("\\left", "").replace("\\right", "").replace("^{\\circ}", "").replace("^\\circ", "")
    s = s.replace("\\$", "")
    s = math_equiv.remove_right_units(s)
    s = s.replace("\\%", "").replace(" .", " 0.").replace("{.", "{0.")
    if not s:
        return s
    if s[0] == ".":
        s = "0" + s
    halves = s.split("=")
    if len(halves) == 2 and len(halves[0]) <= 2:
        s = halves[1]
    s = math_equiv.fix_sqrt(s).replace(" ", "")
    parts = s.split("\\frac")
    if any(p == "" for p in parts[1:]):
        raise IndexError("empty \\frac")  # AGIEval indexes the first character; the comparison falls back
    s = math_equiv.fix_fracs(s)
    if s == "0.5":
        s = "\\frac{1}{2}"
    return fix_a_slash_b(s)


def agieval_is_equiv(a: str | None, b: str | None) -> bool:
    if a is None and b is None:
        return True
    if a is None or b is None:
        return False
    try:
        return _strip(a) == _strip(b)
    except Exception:  # noqa: BLE001 - as upstream: any normalisation failure compares the raw texts
        return a == b


class AGIEvalEvaluator(Evaluator):
    """AGIEval cloze questions: ``score`` ×100 of replies whose parsed answer equals the gold (no length check,
    as the reference: extra rows are ignored)."""

    name = "AGIEvalEvaluator"

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        parsed = [parse_math_answer(str(p)) for p in predictions]
        ok = [agieval_is_equiv(p, r) for p, r in zip(parsed, references)]
        return Scores({"score": pct(sum(ok), len(predictions))}, ok,
                      [{"pred": p, "answer": r, "correct": c} for p, r, c in zip(parsed, references, ok)])


# the suite's entries in the compat registries (compat/suites.py)


def _agieval_label(label: Any) -> Any:
    if isinstance(label, list):
        return "".join(map(str, label))
    return label if label is None else str(label)


def agieval_v2(ctx: LoadContext, path: str, name: str, setting_name: str) -> Splits:
    """``<path>/<name>.jsonl``: passage + question, options joined by newlines, label (or answer)."""
    if setting_name not in "zero-shot":
        raise ctx.fail("only the zero-shot setting exists", where="setting_name", value=setting_name)
    f = ctx.member(ctx.find(path), f"{name}.jsonl")
    items = []
    for loc, item in jsonl(f):
        need(ctx, item, ("passage", "question", "options", "label"), file=f, where=loc)
        label = item["label"] if item["label"] else item.get("answer")
        items.append((loc, {"question": (item["passage"] or "") + item["question"],
                            "options": "\n".join(item["options"]) if item["options"] else "",
                            "label": _agieval_label(label)}))
    return rows(items, f)


EVALUATORS: dict[str, type] = {"AGIEvalEvaluator": AGIEvalEvaluator}
LOADERS = {
    "AGIEvalDataset_v2": agieval_v2,
}
