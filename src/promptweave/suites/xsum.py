"""XSum (one-sentence news summaries): its loader and postprocessor."""
from __future__ import annotations

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    jsonl,
    need,
    rows,
)


def xsum(ctx: LoadContext, path: str) -> Splits:
    """The first 1,000 JSONL lines; rows whose dialogue or summary is a float (NaN in the export) are dropped.
    OpenCompass names the file; AISBench names its folder, holding ``dev.jsonl``."""
    f = ctx.find(path)
    if f.is_dir():
        f = ctx.member(f, "dev.jsonl")
    items = []
    for i, (loc, sample) in enumerate(jsonl(f, errors="ignore")):
        if i == 1000:
            break
        need(ctx, sample, ("dialogue", "summary"), file=f, where=loc)
        if isinstance(sample["dialogue"], float) or isinstance(sample["summary"], float):
            continue
        items.append((loc, {"dialogue": sample["dialogue"], "summary": sample["summary"]}))
    return rows(items, f)



def xsum_postprocess(text: str) -> str:
    return text.strip().split("\n")[0].strip()


LOADERS = {
    "XsumDataset": xsum,
}


POSTPROCESSORS = {
    "Xsum_postprocess": xsum_postprocess,
}
