"""GSM8K (grade-school maths word problems): its loader, the answer postprocessors and the numeric-match evaluator."""
from __future__ import annotations

import re

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    jsonl,
    need,
    rows,
)
from promptweave.evaluate.evaluators import RowEvaluator


def gsm8k(ctx: LoadContext, path: str) -> Splits:
    """``<path>/train.jsonl`` and ``<path>/test.jsonl``, rows as stored (question / answer)."""
    splits = ("train", "test")
    out = {}
    for split, f in zip(splits, ctx.files(path, [f"{s}.jsonl" for s in splits])):
        out[split] = rows(((loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)), f)
    return out



class Gsm8kEvaluator(RowEvaluator):
    """Equal as text, or as numbers within 1e-6 (gold read as an integer, as the reference)."""

    name = "Gsm8kEvaluator"

    def judge_row(self, pred, ref):
        try:
            ok = pred == ref or abs(float(pred) - int(ref)) < 1e-6
        except (TypeError, ValueError, OverflowError):
            ok = False
        return ok, {"pred": pred, "answer": ref}



def gsm8k_dataset_postprocess(text: str) -> str:
    """The gold number after '#### ' with thousands separators removed."""
    parts = text.split("#### ")
    if len(parts) < 2:
        # the reference raises IndexError here; a gold answer without '####' is kept as written instead
        return text.replace(",", "")
    return parts[1].replace(",", "")


def gsm8k_postprocess(text: str) -> str:
    """The last number before any follow-up 'Question:' the model invented, or 'NULL'."""
    text = text.split("Question:")[0]
    numbers = re.findall(r"\-?\d+\.\d+|\-?\d+", text)
    return numbers[-1] if numbers else "NULL"


LOADERS = {
    "GSM8KDataset": gsm8k,
}


EVALUATORS = {
    "Gsm8kEvaluator": Gsm8kEvaluator,
}


POSTPROCESSORS = {
    "gsm8k_dataset_postprocess": gsm8k_dataset_postprocess,
    "gsm8k_postprocess": gsm8k_postprocess,
    "gsm8k": gsm8k_postprocess,
    "gsm8k_dataset": gsm8k_dataset_postprocess,
}
