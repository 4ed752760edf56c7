"""BIG-Bench Hard: its loader, the multiple-choice and free-form answer postprocessors and their evaluators
(OpenCompass's rules; AISBench's free-form rule is in the aisbench suite)."""
from __future__ import annotations

import re

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
)
from promptweave.data.loaders.qa import examples
from promptweave.evaluate.evaluators import RowEvaluator


def bbh(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/<name>.json`` holding ``{"examples": [{input, target}, ...]}``."""
    return examples(ctx, ctx.member(ctx.find(path), f"{name}.json"))



class BBHEvaluatorMCQ(RowEvaluator):
    name = "BBHEvaluator_mcq"
    metric = "score"

    def judge_row(self, pred, ref):
        return pred == ref, {"pred": pred, "answer": ref}


class BBHEvaluator(RowEvaluator):
    """Free-form BBH: both sides through ``bbh_freeform_postprocess``, compared case-insensitively."""

    name = "BBHEvaluator"
    metric = "score"

    def judge_row(self, pred, ref):
        p, r = bbh_freeform_postprocess(pred), bbh_freeform_postprocess(ref)
        return p.casefold() == r.casefold(), {"pred": p, "answer": r}



# -- BBH --------------------------------------------------------------------------------------------------------


def bbh_mcq_postprocess(text: str) -> str:
    ans = text
    parts = ans.split("answer is ")
    if len(parts) != 1:
        ans = parts[1].strip()
    m = re.search(r"\(([A-Z])\)*", ans)
    if m:
        return m.group(1)
    m = re.search(r"([A-Z])", ans)
    if m:
        return m.group(1)
    return ans


def bbh_freeform_postprocess(text: str) -> str:
    ans = text
    parts = re.split(r"answer is\s*:?\s*", ans, flags=re.IGNORECASE)
    if len(parts) != 1:
        ans = parts[-1].strip()
    ans = ans.split("\n")[0].strip()
    if ans.endswith("."):
        ans = ans[:-1].strip()
    m = re.search(r"\*\*(.*?)\*\*", ans)
    if m:
        ans = m.group(1).strip()
    for words in (r"^(yes|no)\b", r"^(true|false)\b"):
        m = re.match(words, ans, flags=re.IGNORECASE)
        if m:
            return m.group(1).capitalize()
    if not re.search(r"\d\s*,\s*\d", ans):
        ans = re.sub(r"\s*,\s*", " ", ans)
    return re.sub(r"\s+", " ", ans).strip()


LOADERS = {
    "BBHDataset": bbh,
}


EVALUATORS = {
    "BBHEvaluator": BBHEvaluator,
    "BBHEvaluator_mcq": BBHEvaluatorMCQ,
}


POSTPROCESSORS = {
    "bbh_mcq_postprocess": bbh_mcq_postprocess,
    "bbh_freeform_postprocess": bbh_freeform_postprocess,
    "bbh-mcq": bbh_mcq_postprocess,
    "bbh-freeform": bbh_freeform_postprocess,
}
