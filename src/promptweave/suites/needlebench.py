"""NeedleBench v2 ATC (ancestral trace challenge): the reply names the eldest ancestor in ``\\boxed{}``.

The postprocessor takes the last ``\\boxed{...}`` of the reply (outer double braces dropped) and cleans it to a
bare name: LaTeX ``\\text{}``/``\\boxed{}`` wrappers unwrapped, ``\\[``/``\\]`` and backslashes dropped, quotes
removed, tildes turned into spaces, whitespace collapsed. A reply without a box becomes the string ``'None'``,
as the reference does, so it never equals a name. The evaluator compares stripped strings exactly.
"""
from __future__ import annotations

import re
from typing import Any

from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths
from promptweave.evaluate.math_equiv import extract_boxed_answer

NO_ANSWER = "None"


def clean_atc_answer(text: str | None) -> str:
    if not text or text == NO_ANSWER:
        return NO_ANSWER
    text = re.sub(r"\\text\{([^}]+)\}", r"\1", text)
    text = re.sub(r"\\boxed\{([^}]+)\}", r"\1", text)
    text = re.sub(r"\\[\[\]]", "", text)
    text = text.replace("\\\\", "").replace("\\", "")
    text = re.sub(r"\s+", " ", text).strip()
    # tildes become spaces only after the whitespace pass, so '~' at an edge leaves a space (as the reference)
    return text.replace('"', "").replace("'", "").replace("~", " ")


def needlebench_atc_postprocess_v2(text: str) -> str:
    boxed = extract_boxed_answer(str(text), strip_double_curly_brace=True)
    return clean_atc_answer(boxed) if boxed else NO_ANSWER


class NeedleBenchATCEvaluator(Evaluator):
    """``score``: the share (×100) of replies equal to the gold name once both are stripped."""

    name = "NeedleBenchATCEvaluator"

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        ok, details = [], []
        for pred, ref in zip(predictions, references):
            hit = str(pred).strip() == str(ref).strip()
            ok.append(hit)
            details.append({"pred": pred, "answer": ref, "correct": hit})
        return Scores({"score": 100 * sum(ok) / len(ok) if ok else 0.0}, ok, details)


# the suite's entries in the compat registries (compat/suites.py)
EVALUATORS: dict[str, type] = {
    "NeedleBenchATCEvaluator": NeedleBenchATCEvaluator,
    "needlebench_atc_evaluator": NeedleBenchATCEvaluator,
}
POSTPROCESSORS = {"needlebench_atc_postprocess_v2": needlebench_atc_postprocess_v2}
