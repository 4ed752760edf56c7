"""SummEdits (summary consistency): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, need
from promptweave.data.loaders.classify import json_records, mapped, table


def summedits_v2(ctx: LoadContext, path: str) -> Splits:
    """SummEdits JSONL: ``label`` 1 (consistent) -> A, 0 -> B."""
    f = ctx.find(path)
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("label",), file=f, where=loc)
        r["label"] = mapped(ctx, f, "label", {0: "B", 1: "A"}, loc, r["label"])
        items.append((loc, r))
    return table(items, f)


LOADERS = {
    "SummeditsDataset_V2": summedits_v2,
}
