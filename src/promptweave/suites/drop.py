"""DROP (discrete reasoning over paragraphs, simple-evals' format) and AdvGLUE's accuracy drop: the loader, DROP's
fuzzy answer match and evaluators.

DROP: the text after the first ``Answer:`` line marker (case-insensitive; the whole reply when there is none) is
compared with each ``|``-separated gold answer after normalising both (lower case, punctuation dropped, the
articles a/an/the dropped, whitespace collapsed); a row is right when one normalised string contains the other, or
both are empty. ``accuracy`` is 100 × right / rows.
"""
from __future__ import annotations

import re
import string
from typing import Any

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    jsonl,
    need,
    rows,
)
from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import AccEvaluator, check_lengths

_ANSWER_LINE = re.compile(r"(?i)Answer\s*:\s*([^\n]+)")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)


def drop_openai(ctx: LoadContext, path: str) -> Splits:
    """simple-evals' DROP JSONL: ``context`` -> prompt, ``ref_text`` -> answers, as the validation split."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, data in jsonl(f):
        need(ctx, data, ("context", "ref_text"), file=f, where=loc)
        items.append((loc, {"prompt": data["context"], "answers": data["ref_text"]}))
    return {"validation": rows(items, f)}



def drop_normalize(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def drop_fuzzy_match(a: str, b: str) -> bool:
    a, b = drop_normalize(a), drop_normalize(b)
    if not a or not b:
        return a == b
    return a in b or b in a


class DropOpenAIEvaluator:
    """OpenCompass's ``DropOpenAIEvaluator`` (simple-evals' DROP rule), natively."""

    name = "DropOpenAIEvaluator"
    needs: frozenset[str] = frozenset()

    def __init__(self, **kwargs: Any) -> None:
        if kwargs:
            raise EvaluationError(f"{self.name} takes no argument {min(kwargs)!r}", field=f"evaluator.{min(kwargs)}")

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        if len(predictions) != len(references):
            raise EvaluationError(f"{self.name}: {len(predictions)} predictions but {len(references)} references",
                                  field="evaluator", expected="one prediction per test row")
        if not predictions:
            # the reference divides by the row count and fails on an empty set; nothing to score is 0 here
            return Scores({"accuracy": 0.0}, [], [])
        correct: list[bool | None] = []
        details = []
        for pred, gold in zip(predictions, references):
            pred = "" if pred is None else str(pred)
            m = _ANSWER_LINE.search(pred)
            extracted = m.group(1) if m else pred
            ok = any(drop_fuzzy_match(extracted, g) for g in str(gold).split("|"))
            correct.append(ok)
            details.append({"pred": pred, "answer": gold, "correct": ok})
        return Scores({"accuracy": 100 * sum(bool(c) for c in correct) / len(correct)}, correct, details)



class AccDropEvaluator(AccEvaluator):
    """AdvGLUE: the first half of the rows is attacked, the second the originals; ``acc_drop`` = 1 - after/before."""

    name = "AccDropEvaluator"

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        n = len(predictions)
        if n % 2:
            raise EvaluationError("AccDropEvaluator needs an even number of rows (attacked + original)",
                                  field="evaluator", value=n)
        after = AccEvaluator.score(self, predictions[:n // 2], references[:n // 2])
        before = AccEvaluator.score(self, predictions[n // 2:], references[n // 2:])
        b, a = before.metrics["accuracy"], after.metrics["accuracy"]
        return Scores({"acc_drop": 1 - a / b if b else 0.0, "acc_after": a, "acc_before": b},
                      after.correct + before.correct)


LOADERS = {
    "DropOpenAIDataset": drop_openai,
}


EVALUATORS = {
    "AccDropEvaluator": AccDropEvaluator,
    "DropOpenAIEvaluator": DropOpenAIEvaluator,
}
