"""NeedleBench: the needle-in-a-haystack scores (single, multi and parallel needles; v2's origin rule) and v2 ATC
(ancestral trace challenge), where the reply names the eldest ancestor in ``\\boxed{}``.

The postprocessor takes the last ``\\boxed{...}`` of the reply (outer double braces dropped) and cleans it to a
bare name: LaTeX ``\\text{}``/``\\boxed{}`` wrappers unwrapped, ``\\[``/``\\]`` and backslashes dropped, quotes
removed, tildes turned into spaces, whitespace collapsed. A reply without a box becomes the string ``'None'``,
as the reference does, so it never equals a name. The evaluator compares stripped strings exactly.
"""
from __future__ import annotations

import re
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths, levenshtein
from promptweave.evaluate.math_equiv import extract_boxed_answer
from promptweave.evaluate.postprocess import identity_postprocess

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


def _needle_gold(reference: str) -> tuple[str, str]:
    parts = str(reference).split("*")
    if len(parts) < 2:
        raise EvaluationError("NeedleBench golds look like 'answer*keyword'", field="evaluator", value=reference)
    return parts[0], parts[1]


class NeedleBenchOriginEvaluator(Evaluator):
    """Single needle (NeedleBench v1): 100 when the keyword is in the reply, else 20% of the edit similarity of the
    whitespace-free reply to the answer (``use_trim`` cuts the reply to about the answer's length first)."""

    name = "NeedleBenchOriginEvaluator"

    def __init__(self, use_trim: bool = False, **kw: Any) -> None:
        super().__init__(**kw)
        self.use_trim = use_trim

    @staticmethod
    def trim(pred: str, ref: str) -> str:
        lo, hi = int(0.8 * len(ref)), int(1.2 * len(ref))
        cut = pred[:hi]
        if len(cut) > lo and ref and ref[-1] in cut[lo:]:
            cut = cut[:lo + cut[lo:].index(ref[-1]) + 1]
        return cut

    def row(self, raw: str, reference: str) -> tuple[float, dict]:
        answer, keyword = _needle_gold(reference)
        pred, ref = re.sub(r"\s+", "", raw), re.sub(r"\s+", "", answer)
        if self.use_trim:
            pred = self.trim(pred, ref)
        dist = levenshtein(pred, ref)
        longest = max(len(pred), len(ref))
        score = 100 * (1 - dist / longest) if longest else 100
        score = 100 if keyword in raw else 0.2 * score
        return score, {"pred": pred, "answer": ref, "edit_distance": dist, "score": score}

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        rows = [self.row(str(p), r) for p, r in zip(predictions, references)]
        total = sum(s for s, _ in rows)
        return Scores({"score": total / len(rows) if rows else 0.0}, [s == 100 for s, _ in rows], [d for _, d in rows])


class NeedleBenchV2OriginEvaluator(NeedleBenchOriginEvaluator):
    """NeedleBench v2's single needle: 100 when the keyword is in the reply, else 0."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)

    def row(self, raw: str, reference: str) -> tuple[float, dict]:
        answer, keyword = _needle_gold(reference)
        score = 100 if keyword in raw else 0
        return score, {"pred": re.sub(r"\s+", "", raw), "answer": re.sub(r"\s+", "", answer), "score": score}


class NeedleBenchMultiEvaluator(Evaluator):
    """Multiple needles: the share of the gold's keywords (after '*', space separated) found in the reply."""

    name = "NeedleBenchMultiEvaluator"

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        per, details = [], []
        for p, r in zip(predictions, references):
            parts = str(r).split("*")
            if len(parts) != 2:
                raise EvaluationError("NeedleBench multi golds look like 'answer*kw1 kw2'", field="evaluator",
                                      value=r)
            words = parts[1].lower().split()
            hit = sum(1 for w in words if w in str(p).lower())
            s = hit * (100 / len(words)) if words else 0
            per.append(s)
            details.append({"pred": str(p).lower(), "answer": r, "matched_keywords": hit, "score": s})
        return Scores({"score": sum(per) / len(per) if per else 0.0}, [s >= 100 for s in per], details)


class NeedleBenchParallelEvaluator(Evaluator):
    """Parallel needles: golds 'kw1*kw2#depth1*depth2'; ``Depth<d>`` is the share of rows whose reply holds the
    needle at depth d (×100), ``average_score`` their mean. Depths come from the first row, as the reference."""

    name = "NeedleBenchParallelEvaluator"

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        if not predictions:
            return Scores({"average_score": 0.0}, [])
        try:
            depths = [int(i) for i in str(references[0]).split("#")[1].split("*")]
        except (IndexError, ValueError):
            raise EvaluationError("NeedleBench parallel golds look like 'kw1*kw2#10*50'", field="evaluator",
                                  value=references[0]) from None
        by_depth = dict.fromkeys(depths, 0.0)
        correct = []
        for p, r in zip(predictions, references):
            words = str(r).split("#")[0].split("*")
            found = [w in str(p) for w in words]
            for w, d in zip(words, depths):
                if w in str(p):
                    by_depth[d] += 100 / len(predictions)
            correct.append(all(found))
        metrics = {f"Depth{d}": s for d, s in by_depth.items()}
        metrics["average_score"] = sum(by_depth.values()) / len(by_depth)
        return Scores(metrics, correct)


EVALUATORS: dict[str, type] = {
    "NeedleBenchOriginEvaluator": NeedleBenchOriginEvaluator,
    "NeedleBenchParallelEvaluator": NeedleBenchParallelEvaluator,
    "NeedleBenchMultiEvaluator": NeedleBenchMultiEvaluator,
    "NeedleBenchATCEvaluator": NeedleBenchATCEvaluator,
    "needlebench_atc_evaluator": NeedleBenchATCEvaluator,
}
POSTPROCESSORS = {
    "needlebench_atc_postprocess_v2": needlebench_atc_postprocess_v2,
    "needlebench_postprocess": identity_postprocess,
    "needlebench_dataset_postprocess": identity_postprocess,
}
