"""Evaluators: score processed predictions against gold answers, row by row."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from promptweave.evaluate.postprocess import general_postprocess


@dataclass
class Scores:
    metrics: dict[str, float]
    correct: list[bool]


def _norm(x: Any) -> str:
    return str(x).strip()


class AccEvaluator:
    """Accuracy (percent): a prediction is correct when it equals the gold answer as text."""

    metric = "accuracy"

    def score(self, predictions: Sequence[Any], references: Sequence[Any]) -> Scores:
        correct = [_norm(p) == _norm(r) for p, r in zip(predictions, references)]
        return Scores({self.metric: 100.0 * sum(correct) / max(len(correct), 1)}, correct)


class PPLAccEvaluator(AccEvaluator):
    """Accuracy of the label PPL inference chose (lowest PPL) against the gold label."""


class EMEvaluator:
    """Exact match (percent) after normalising both sides; a reference may be a list of accepted answers."""

    metric = "score"

    def score(self, predictions: Sequence[Any], references: Sequence[Any]) -> Scores:
        correct = []
        for p, r in zip(predictions, references):
            refs = r if isinstance(r, (list, tuple)) else [r]
            pn = general_postprocess(p)
            correct.append(any(pn == general_postprocess(x) for x in refs))
        return Scores({self.metric: 100.0 * sum(correct) / max(len(correct), 1)}, correct)


EVALUATORS: dict[str, type] = {
    "AccEvaluator": AccEvaluator,
    "AccwithDetailsEvaluator": AccEvaluator,
    "accuracy": AccEvaluator,
    "PPLAccEvaluator": PPLAccEvaluator,
    "ppl_accuracy": PPLAccEvaluator,
    "EMEvaluator": EMEvaluator,
    "exact_match": EMEvaluator,
}
