"""Humanity's Last Exam: its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.hub import read_folder
from promptweave.data.sources import Split


def hle(ctx: LoadContext, path: str, category: str | None = None) -> Splits:
    """Humanity's Last Exam: the test split's text-only questions (``image == ''``), optionally one ``category``;
    ``question`` renamed ``problem``; the same rows as train and test."""
    got = read_folder(ctx, ctx.find(path))
    if not isinstance(got, dict) or "test" not in got:
        raise ctx.fail("the HLE dataset needs a test split", file=ctx.find(path))
    part = got["test"]
    items, where = [], []
    for i, row in enumerate(part.rows):
        if row.get("image") != "" or (category and row.get("category") != category):
            continue
        new = {("problem" if k == "question" else k): v for k, v in row.items()}
        items.append(new)
        where.append(part.locate(i))
    out = dict(got)
    out["train"] = out["test"] = Split(items, part.file, where)
    return out


LOADERS = {
    "HLEDataset": hle,
}
