"""Answer matching of OpenAI's simple-evals as OpenCompass ports it: DROP (``DropOpenAIEvaluator``) and
StrategyQA's yes/no postprocessors.

DROP: the text after the first ``Answer:`` line marker (case-insensitive; the whole reply when there is none) is
compared with each ``|``-separated gold answer after normalising both (lower case, punctuation dropped, the
articles a/an/the dropped, whitespace collapsed); a row is right when one normalised string contains the other, or
both are empty. ``accuracy`` is 100 × right / rows.
"""
from __future__ import annotations

import re
import string
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores

_ANSWER_LINE = re.compile(r"(?i)Answer\s*:\s*([^\n]+)")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)


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


def strategyqa_pred_postprocess(text: str) -> str:
    """The first paragraph's text after its last ``answer is ``; its first ``yes``/``no`` (lower-cased), else ''."""
    text = text.split("\n\n")[0].split("answer is ")[-1]
    m = re.search(r"(yes|no)", text.lower())
    return m.group(1) if m else ""


def strategyqa_dataset_postprocess(gold: Any) -> str:
    """StrategyQA's gold is a JSON bool: ``True`` (or the string ``'True'``) is ``yes``, anything else ``no``."""
    return "yes" if str(gold) == "True" else "no"


__all__ = ["DropOpenAIEvaluator", "drop_fuzzy_match", "drop_normalize", "strategyqa_dataset_postprocess",
           "strategyqa_pred_postprocess"]
