"""IFEval (instruction following): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows


def ifeval(ctx: LoadContext, path: str) -> Splits:
    """JSONL of instructions: ``prompt``, and the whole record as ``reference`` for the checker."""
    f = ctx.find(path)
    items = []
    for loc, tmp in jsonl(f):
        need(ctx, tmp, ("prompt",), file=f, where=loc)
        items.append((loc, {"prompt": tmp["prompt"], "reference": tmp}))
    return rows(items, f)


LOADERS = {
    "IFEvalDataset": ifeval,
}
