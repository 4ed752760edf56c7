"""ANLI (adversarial natural language inference): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, need
from promptweave.data.loaders.classify import json_records, mapped, table

# -- one JSONL file, one column relabelled --------------------------------------------------------------------


def anli(ctx: LoadContext, path: str) -> Splits:
    """ANLI ``dev.jsonl``: ``label`` c / e / n -> A / B / C."""
    f = ctx.find(path)
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("label",), file=f, where=loc)
        r["label"] = mapped(ctx, f, "label", {"c": "A", "e": "B", "n": "C"}, loc, r["label"])
        items.append((loc, r))
    return table(items, f)


LOADERS = {
    "AnliDataset": anli,
}
