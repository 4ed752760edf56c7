"""Scores of the corpus-loss forms: averaged inference-PPL and bits per character.

Their predictions are the records the forms write (``infer/inference_ppl.py``, ``infer/sw_ce_loss.py``): dicts with
the reference's field names, which its evaluators read by name.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import Evaluator


def _fields(predictions: Sequence[Any], keys: tuple[str, str], who: str, form: str) -> tuple[list[float], list[float]]:
    a, b = [], []
    for i, p in enumerate(predictions):
        if not isinstance(p, dict) or any(k not in p for k in keys):
            raise EvaluationError(f"{who} scores the records of {form} ({keys[0]!r} and {keys[1]!r} per row)",
                                  field="evaluator.type", value=who,
                                  expected=f"infer_cfg.inferencer.type={form} (row {i} holds {p!r:.80})")
        a.append(float(p[keys[0]]))
        b.append(float(p[keys[1]]))
    return a, b


class AverageInferencePPLEvaluator(Evaluator):
    """``average_ppl`` = the summed span losses of all rows / their summed token counts (not a mean of means)."""

    name = "AverageInferencePPLEvaluator"

    def score(self, predictions, references, ctx=None) -> Scores:
        ppl, n = _fields(predictions, ("ppl", "token_len"), self.name, "InferencePPLOnlyInferencer")
        if not sum(n):
            raise EvaluationError(f"{self.name}: no labelled token in any row, so the average is undefined "
                                  "(the reference divides by zero here)", field="evaluator",
                                  expected="rows whose 'label' spans cover some of the prompt")
        return Scores({"average_ppl": sum(ppl) / sum(n)}, [None] * len(ppl))


class BPCEvaluator(Evaluator):
    """``bpc`` = the corpus's summed cross-entropy (nats) / (its character count × ln 2)."""

    name = "BPCEvaluator"

    def score(self, predictions, references, ctx=None) -> Scores:
        loss, chars = _fields(predictions, ("loss", "total_chr_num"), self.name, "SWCELossInferencer")
        if not chars or not chars[0]:
            raise EvaluationError(f"{self.name}: the corpus has no characters", field="evaluator")
        return Scores({"bpc": sum(loss) / (chars[0] * math.log(2))}, [None] * len(loss))
