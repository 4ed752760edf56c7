"""AISBench's LLM-judge scoring rules: what its ``*_llmjudge`` configs name in ``eval_cfg`` (AISBench 3.1).

The judge stage itself (``judge_infer_cfg``: the judge model asked about each candidate answer) is the engine's
``evaluate/judge_stage.py``; these are the two names its ``eval_cfg`` applies to the judge's replies:
``get_a_or_b`` reads the verdict, ``LLMJudgeCorrectEvaluator`` counts the ``A`` verdicts.
"""
from __future__ import annotations

from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator


def get_a_or_b(pred: Any) -> str:
    """The verdict in a judge's reply: its last character when that is ``A`` or ``B``, else ``B`` (AISBench reads
    only the last character, so ``"A."`` or ``"A\\n"`` is a ``B``)."""
    last = str(pred)[-1:] if pred is not None else ""
    return last if last in ("A", "B") else "B"


class LLMJudgeCorrectEvaluator(Evaluator):
    """The share of rows whose (post-processed) judge verdict is exactly ``A``, as ``accuracy`` in percent."""

    name = "LLMJudgeCorrectEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        if len(predictions) != len(references):
            raise EvaluationError(f"{self.name}: {len(predictions)} predictions but {len(references)} references",
                                  field="evaluator", expected="one judge verdict per test row")
        correct = [p == "A" for p in predictions]
        details = [{"pred": p, "answer": r, "correct": ok} for p, r, ok in zip(predictions, references, correct)]
        accuracy = 100.0 * sum(correct) / len(correct) if correct else 0.0
        return Scores({"accuracy": accuracy}, list(correct), details)


def _as_suite(entries: dict[str, Any]) -> dict[str, Any]:
    """Under ``ais_bench:<name>`` and the plain name (only AISBench defines these names)."""
    return {**{f"ais_bench:{k}": v for k, v in entries.items()}, **entries}


EVALUATORS = _as_suite({"LLMJudgeCorrectEvaluator": LLMJudgeCorrectEvaluator})
POSTPROCESSORS = _as_suite({"get_a_or_b": get_a_or_b})
