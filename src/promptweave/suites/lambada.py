"""LAMBADA (last-word prediction): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows


def lambada(ctx: LoadContext, path: str) -> Splits:
    """One JSONL file as the test split."""
    f = ctx.find(path)
    return {"test": rows(((loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)), f)}


LOADERS = {
    "lambadaDataset": lambada,
}
