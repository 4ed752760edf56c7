"""Social IQa: its loaders (the three reference classes' row shapes); and its scoring.

SIQA's free-form scoring (OpenCompass and AISBench ``siqa_gen`` configs): the reply matched to the nearest
answer candidate by edit distance (``EDAccEvaluator``).
"""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, need
from promptweave.data.loaders.choice import labelled_splits


def siqa(ctx: LoadContext, path: str) -> Splits:
    """``{train,dev}.jsonl`` with labels one per line in ``{train,dev}-labels.lst`` (dev -> validation)."""
    return labelled_splits(ctx, path, lambda f, loc, row, label: {**row, "label": label})


def siqa_v2(ctx: LoadContext, path: str) -> Splits:
    """As siqaDataset, the label as a letter (1-3 -> A-C) and ``all_labels`` listing the lettered candidates."""

    def convert(f, loc, row, label):
        need(ctx, row, ("answerA", "answerB", "answerC"), file=f, where=loc)
        if not 1 <= label <= 3:
            raise ctx.fail("a SIQA label must be 1, 2 or 3", file=f, where=loc, value=label)
        row["all_labels"] = {"candidates": [[f"{k}. {row['answer' + k]}", k, row["answer" + k]] for k in "ABC"],
                             "label": label - 1}
        row["label"] = " ABC"[label]
        return row

    return labelled_splits(ctx, path, convert)


def siqa_v3(ctx: LoadContext, path: str) -> Splits:
    """As siqaDataset, ``answerA/B/C`` renamed ``A/B/C`` (moved after the other fields, as the reference pops and
    re-adds them) and ``answer`` the label as a letter (``'ABC'[label - 1]``, the reference's indexing)."""

    def convert(f, loc, row, label):
        need(ctx, row, ("answerA", "answerB", "answerC"), file=f, where=loc)
        if not -2 <= label <= 3:
            raise ctx.fail("a SIQA label must be 1, 2 or 3", file=f, where=loc, value=label)
        for k in "ABC":
            row[k] = row.pop("answer" + k)
        row["answer"] = "ABC"[label - 1]
        return row

    return labelled_splits(ctx, path, convert)


LOADERS = {
    "siqaDataset": siqa,
    "siqaDataset_V2": siqa_v2,
    "SiqaDatasetV3": siqa_v3,
}


# -- scoring --------------------------------------------------------------------------------------------------
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
