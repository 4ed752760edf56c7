"""AISBench's small text-task rules that its shipped configs name: LAMBADA's first-word match, MGSM's exact match,
MMLU-Pro's base-model option match, and the ``Xsum`` registry alias (AISBench 3.1; registered under ``ais_bench:`` so OpenCompass configs keep their
own classes)."""
from __future__ import annotations

import re
import string
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator
from promptweave.evaluate.postprocess import general_postprocess
from promptweave.suites.xsum import xsum_postprocess

_PUNCT = re.compile("[" + re.escape(string.punctuation) + "]")


def _check(name: str, predictions: Any, references: Any) -> None:
    if len(predictions) != len(references):
        raise EvaluationError(f"{name}: {len(predictions)} predictions but {len(references)} references",
                              field="evaluator", expected="one prediction per test row")


class LambadaEvaluator(Evaluator):
    """``accuracy``: the reply's first word (cut at its first punctuation mark) equals the gold, both through
    ``general_postprocess``."""

    name = "LambadaEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        _check(self.name, predictions, references)
        correct: list[bool | None] = []
        details = []
        for pred, ref in zip(predictions, references):
            word = _PUNCT.split(str(pred).strip().split(" ")[0])[0]
            ok = general_postprocess(word) == general_postprocess(str(ref))
            correct.append(ok)
            details.append({"pred": word, "answer": ref, "correct": ok})
        n = len(correct)
        return Scores({"accuracy": 100.0 * sum(1 for c in correct if c) / n if n else 0.0}, correct, details)


class MGSMEvaluator(Evaluator):
    """``accuracy``: the (post-processed) prediction equals the gold exactly."""

    name = "MGSM_Evaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        _check(self.name, predictions, references)
        correct: list[bool | None] = [r == p for p, r in zip(predictions, references)]
        details = [{"references": r, "predictions": p, "correct": ok}
                   for p, r, ok in zip(predictions, references, correct)]
        n = len(correct)
        return Scores({"accuracy": sum(1 for c in correct if c) / n * 100 if n else 0.0}, correct, details)


_MMLU_PRO_OPTIONS = frozenset("ABCDEFGHIJKLMNOP")


def mmlu_pro_equal(pred: str, refer: Any) -> bool:
    """The gold ``"<letter>. <text>"`` (exactly one ``". "``) matches a reply that is its letter or its text."""
    parts = str(refer).split(". ")
    if len(parts) != 2:
        return False
    letter, text = parts
    return (pred in _MMLU_PRO_OPTIONS and letter == pred) or text.strip() == pred


class MMLUProBaseEvaluator(Evaluator):
    """``accuracy``: the reply's first line, stripped, is the gold option's letter or its text."""

    name = "MMLUProBaseEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        _check(self.name, predictions, references)
        correct: list[bool | None] = []
        details = []
        for pred, ref in zip(predictions, references):
            first = str(pred).split("\n")[0].strip()
            ok = mmlu_pro_equal(first, ref)
            correct.append(ok)
            details.append({"pred": first, "answer": ref, "correct": ok})
        n = len(correct)
        return Scores({"accuracy": 100 * sum(1 for c in correct if c) / n if n else 0.0}, correct, details)


EVALUATORS = {"ais_bench:LambadaEvaluator": LambadaEvaluator, "ais_bench:MGSM_Evaluator": MGSMEvaluator,
              "ais_bench:MMLUProBaseEvaluator": MMLUProBaseEvaluator}
POSTPROCESSORS = {"Xsum": xsum_postprocess}
