"""StrategyQA (yes/no questions): its loader and simple-evals' yes/no postprocessors as OpenCompass ports them."""
from __future__ import annotations

import re
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need, rows


def strategyqa(ctx: LoadContext, path: str) -> Splits:
    """StrategyQA: one JSON file holding a list of rows, kept as stored (its ``answer`` a JSON bool)."""
    f = ctx.find(path)
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("StrategyQA data must be a JSON list of rows", file=f, value=type(data).__name__)
    return rows(((f"[{i}]", dict(need(ctx, r, (), file=f, where=f"[{i}]"))) for i, r in enumerate(data)), f)


def strategyqa_pred_postprocess(text: str) -> str:
    """The first paragraph's text after its last ``answer is ``; its first ``yes``/``no`` (lower-cased), else ''."""
    text = text.split("\n\n")[0].split("answer is ")[-1]
    m = re.search(r"(yes|no)", text.lower())
    return m.group(1) if m else ""


def strategyqa_dataset_postprocess(gold: Any) -> str:
    """StrategyQA's gold is a JSON bool: ``True`` (or the string ``'True'``) is ``yes``, anything else ``no``."""
    return "yes" if str(gold) == "True" else "no"


LOADERS = {
    "StrategyQADataset": strategyqa,
}
POSTPROCESSORS = {
    "strategyqa_pred_postprocess": strategyqa_pred_postprocess,
    "strategyqa_dataset_postprocess": strategyqa_dataset_postprocess,
    "strategyqa": strategyqa_pred_postprocess,
    "strategyqa_dataset": strategyqa_dataset_postprocess,
}
