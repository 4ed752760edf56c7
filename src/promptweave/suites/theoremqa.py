"""TheoremQA: its loaders and answer postprocessor."""
from __future__ import annotations

import re

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need, rows
from promptweave.data.sources import read_hf_named


def theoremqa(ctx: LoadContext, path: str) -> Splits:
    """One CSV read by ``datasets``' csv builder (so column types are inferred the same way) as the test split."""
    f = ctx.find(path, local_mode=True)
    return read_hf_named("csv", data_files={"test": str(f)})


def theoremqa_v3(ctx: LoadContext, path: str) -> Splits:
    """A JSON list of problems (a local path), ``Answer`` turned into text."""
    f = ctx.find(path, local_mode=True)
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list", file=f)
    items = []
    for i, it in enumerate(data):
        row = dict(need(ctx, it, ("Answer",), file=f, where=f"[{i}]"))
        row["Answer"] = str(row["Answer"])
        items.append((f"[{i}]", row))
    return rows(items, f)


def theoremqa_postprocess(text: str) -> str:
    text = text.strip()
    matches = re.findall(r"answer is ([^\s]+)", text)
    if not matches:
        return text
    return matches[0].strip().strip(".,?!\"';:")


LOADERS = {
    "TheoremQADataset": theoremqa,
    "TheoremQADatasetV3": theoremqa_v3,
}
POSTPROCESSORS = {
    "TheoremQA_postprocess": theoremqa_postprocess,
}
