"""RealworldQA (AISBench): the image questions' ``ANSWER: ...`` line matched with the gold (its loader is native in
``data/loaders/mm_tsv.py``)."""
from __future__ import annotations

import re
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator

_ANSWER = re.compile(r"ANSWER:\s*(.*)")


def extract_answer(prediction: Any) -> str:
    """The rest of the line after the first ``ANSWER:`` (case as written), stripped; ``''`` without one."""
    m = _ANSWER.search(prediction if isinstance(prediction, str) else str(prediction))
    return m.group(1).strip() if m else ""


class RealworldQAEvaluator(Evaluator):
    """``accuracy``: the extracted answer equals the gold after stripping and lower-casing both (a dict gold: its
    ``answer``)."""

    name = "RealworldQAEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        if len(predictions) != len(references):
            raise EvaluationError(f"{self.name}: {len(predictions)} predictions but {len(references)} references",
                                  field="evaluator", expected="one prediction per test row")
        correct: list[bool | None] = []
        details = []
        for pred, ref in zip(predictions, references):
            gold = ref.get("answer", "") if isinstance(ref, dict) else ref
            got = extract_answer(pred)
            p_norm, g_norm = got.strip().lower(), str(gold).strip().lower()
            ok = p_norm == g_norm
            correct.append(ok)
            details.append({"origin_prediction": pred, "pred": got, "answer": gold, "normalized_prediction": p_norm,
                            "normalized_answer": g_norm, "correct": ok})
        n = len(correct)
        return Scores({"accuracy": 100 * sum(1 for c in correct if c) / n if n else 0}, correct, details)


EVALUATORS = {"RealworldQAEvaluator": RealworldQAEvaluator, "ais_bench:RealworldQAEvaluator": RealworldQAEvaluator}
