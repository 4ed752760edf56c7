"""BIG-Bench Extra Hard: its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.qa import examples


def bbeh(ctx: LoadContext, path: str, name: str) -> Splits:
    """BIG-Bench Extra Hard: ``<path>/<name>/task.json`` holding ``{"examples": [...]}``."""
    return examples(ctx, ctx.member(ctx.find(path), name, "task.json"))


LOADERS = {
    "BBEHDataset": bbeh,
}
