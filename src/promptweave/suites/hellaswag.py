"""HellaSwag: its loaders (plain, lettered answers, and with in-context examples)."""
from __future__ import annotations

from pathlib import Path

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.loaders.choice import ABCD
from promptweave.data.sources import Split


def _hellaswag(ctx: LoadContext, path: str, *, splits: int, letter: bool) -> Splits:
    return _hellaswag_rows(ctx, ctx.find(path), splits=splits, letter=letter)


def _hellaswag_rows(ctx: LoadContext, f: Path, *, splits: int, letter: bool) -> Split:
    items = []
    for loc, data in jsonl(f):
        need(ctx, data, ("query", "choices", "gold"), file=f, where=loc)
        gold = data["gold"]
        items.append((loc, {"ctx": data["query"].split(": ", splits)[-1],
                            **{ABCD[i]: data["choices"][i] for i in range(4)},
                            "label": ABCD[gold] if letter else gold}))
    return rows(items, f)


def hellaswag(ctx: LoadContext, path: str) -> Splits:
    """JSONL of ``query`` / ``choices`` / ``gold`` (the query's first two ``": "``-separated prefixes dropped)."""
    return _hellaswag(ctx, path, splits=2, letter=False)


def hellaswag_v2(ctx: LoadContext, path: str) -> Splits:
    """As HellaswagDataset, one prefix dropped and the gold index as a letter."""
    return _hellaswag(ctx, path, splits=1, letter=True)


def hellaswag_with_ice(ctx: LoadContext, path: str) -> Splits:
    """``hellaswag_train_sampled25.jsonl`` (train, for in-context examples) and ``hellaswag.jsonl`` (val), each
    read as HellaswagDataset_V2 reads its file."""
    root = ctx.find(path)
    out = {}
    for split, name in (("train", "hellaswag_train_sampled25.jsonl"), ("val", "hellaswag.jsonl")):
        f = ctx.member(root, name)
        out[split] = _hellaswag_rows(ctx, f, splits=1, letter=True)
    return out


LOADERS = {
    "HellaswagDataset": hellaswag,
    "HellaswagDataset_V2": hellaswag_v2,
    "HellaswagDatasetwithICE": hellaswag_with_ice,
}
