"""SIQA's free-form scoring (OpenCompass and AISBench ``siqa_gen`` configs): the reply matched to the nearest
answer candidate by edit distance (``EDAccEvaluator``); the loaders are native in ``data/loaders/choice.py``."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.edit_distance import levenshtein
from promptweave.evaluate.evaluators import Evaluator


def nearest_candidate(pred: str, candidates: Any) -> int:
    """The index of the candidate at the least edit distance from ``pred`` (the first on a tie); a candidate that
    is a list counts as its nearest item."""
    best, best_i = None, 0
    for i, cand in enumerate(candidates):
        d = levenshtein(pred, cand) if isinstance(cand, str) else min(levenshtein(pred, str(c)) for c in cand)
        if best is None or d < best:
            best, best_i = d, i
    return best_i


class EDAccEvaluator(Evaluator):
    """``accuracy``: the share of rows whose raw reply is nearest (Levenshtein) to the gold candidate; each gold is
    ``{"candidates": [...], "label": index}``."""

    name = "EDAccEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        if len(predictions) != len(references):
            raise EvaluationError(f"{self.name}: {len(predictions)} predictions but {len(references)} references",
                                  field="evaluator", expected="one prediction per test row")
        correct: list[bool | None] = []
        details = []
        for pred, ref in zip(predictions, references):
            if not isinstance(ref, Mapping) or "candidates" not in ref or "label" not in ref:
                raise EvaluationError(f"{self.name} needs each gold as {{'candidates': [...], 'label': n}}",
                                      field="evaluator", value=ref,
                                      expected="an output column such as siqaDataset_V2's all_labels")
            got = nearest_candidate("" if pred is None else str(pred), ref["candidates"])
            ok = got == ref["label"]
            correct.append(ok)
            details.append({"pred": got, "answer": ref["label"], "correct": ok})
        n = len(correct)
        return Scores({"accuracy": 100 * sum(1 for c in correct if c) / n if n else 0.0}, correct, details)


EVALUATORS = {"EDAccEvaluator": EDAccEvaluator}
