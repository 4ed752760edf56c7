"""RULER (synthetic long-context tasks): how many of a row's gold strings the reply mentions.

Every RULER task keeps its golds as a list of strings, and a gold counts as found when it occurs in the reply,
both lower-cased. Most tasks (common / frequent words, needles, variable tracking) credit the *share* of golds
found; the QA task credits a row fully when *any* of its accepted answers is found. ``score`` is the mean ×100,
rounded to 2 places as the reference reports it.
"""
from __future__ import annotations

from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths


def _golds(ref: Any, who: str) -> list[str]:
    if isinstance(ref, str):  # a bare string is one gold, not a list of characters
        return [ref]
    if isinstance(ref, (list, tuple)) and ref:
        return [str(r) for r in ref]
    raise EvaluationError(f"{who}: a gold is a non-empty list of strings", field="evaluator", value=ref)


class _Ruler(Evaluator):
    """``share``: credit = found / golds (``all`` style tasks); otherwise 1 when any gold is found."""

    share = True

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        per, details = [], []
        for pred, ref in zip(predictions, references):
            text = "" if pred is None else str(pred).lower()
            golds = _golds(ref, self.name)
            hits = [g.lower() in text for g in golds]
            credit = sum(hits) / len(golds) if self.share else float(any(hits))
            per.append(credit)
            details.append({"pred": pred, "answer": golds, "found": sum(hits), "score": credit * 100})
        total = round(sum(per) / len(per) * 100, 2) if per else 0.0
        return Scores({"score": total}, [c == 1.0 for c in per], details)


class RulerCweEvaluator(_Ruler):
    name = "RulerCweEvaluator"


class RulerFweEvaluator(_Ruler):
    name = "RulerFweEvaluator"


class RulerNiahEvaluator(_Ruler):
    name = "RulerNiahEvaluator"


class RulerVtEvaluator(_Ruler):
    name = "RulerVtEvaluator"


class RulerQaEvaluator(_Ruler):
    name = "RulerQaEvaluator"
    share = False


# the suite's entries in the compat registries (compat/suites.py)
EVALUATORS: dict[str, type] = {
    "RulerCweEvaluator": RulerCweEvaluator,
    "RulerFweEvaluator": RulerFweEvaluator,
    "RulerNiahEvaluator": RulerNiahEvaluator,
    "RulerVtEvaluator": RulerVtEvaluator,
    "RulerQaEvaluator": RulerQaEvaluator,
}
