"""Open-ended (LLM-judged) question sets stored as one JSON list per subset: FOFO and the subjective
comparison sets. Each row keeps the question and a ``judge`` dict the judge prompt reads."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need, rows


def problems_file(ctx: LoadContext, path: str, name: str) -> tuple[Any, list[Any]]:
    f = ctx.member(ctx.find(path, local_mode=True), f"{name}.json")
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list of problems", file=f)
    return f, data


def subjective_cmp(ctx: LoadContext, path: str, name: str, *args: Any, **kwargs: Any) -> Splits:
    """``<path>/<name>.json``: question, capability, others, and a judge dict of capability + question."""
    f, data = problems_file(ctx, path, name)
    items = []
    for i, p in enumerate(data):
        need(ctx, p, ("question", "capability", "others"), file=f, where=f"[{i}]")
        items.append((f"[{i}]", {"question": p["question"], "capability": p["capability"], "others": p["others"],
                                 "judge": {"capability": p["capability"], "question": p["question"]}}))
    return rows(items, f)
