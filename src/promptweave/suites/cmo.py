"""CMO fill-in-the-blank (Chinese Mathematical Olympiad): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need
from promptweave.data.loaders.classify import table


def cmo_fib(ctx: LoadContext, path: str) -> Splits:
    """CMO JSONL: ``question`` = ``origin_prompt``, ``answer`` = ``gold_answer``."""
    f = ctx.find(path)
    items = []
    for loc, r in jsonl(f):
        row = dict(need(ctx, r, ("origin_prompt", "gold_answer"), file=f, where=loc))
        row["question"], row["answer"] = row["origin_prompt"], row["gold_answer"]
        items.append((loc, row))
    return table(items, f)


LOADERS = {
    "CMOFibDataset": cmo_fib,
}
