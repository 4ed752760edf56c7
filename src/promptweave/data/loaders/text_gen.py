"""Summarisation and exam-paper sets: XSum JSONL, LCSTS's parallel text files, GAOKAO-Bench JSON papers."""
from __future__ import annotations

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    json_file,
    need,
    rows,
)


def gaokao_bench(ctx: LoadContext, path: str, filename: str, name: str) -> Splits:
    """``<path><filename>`` (plain concatenation, as the reference joins them): a JSON paper whose
    ``example`` list holds the questions."""
    f = ctx.concat(path, filename)
    data = json_file(f)
    if not isinstance(data, dict) or not isinstance(data.get("example"), list):
        raise ctx.fail("expected a JSON object with an 'example' list", file=f)
    return rows(((f"example[{i}]", dict(need(ctx, ex, (), file=f, where=f"example[{i}]")))
                 for i, ex in enumerate(data["example"])), f)
