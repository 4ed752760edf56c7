"""AIME 2024: its loader (AIME 2025 / 2026 are plain JSONL)."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows


def aime2024(ctx: LoadContext, path: str, **_: Any) -> Splits:
    """JSONL with ``origin_prompt`` and ``gold_answer``, copied to ``question`` and ``answer``."""
    f = ctx.find(path)
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, ("origin_prompt", "gold_answer"), file=f, where=loc)
        row = dict(line)
        row["question"], row["answer"] = line["origin_prompt"], line["gold_answer"]
        items.append((loc, row))
    return rows(items, f)


LOADERS = {
    "Aime2024Dataset": aime2024,
}
