"""PHYBench (physics): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need, rows


def phybench(ctx: LoadContext, path: str) -> Splits:
    """``<path>/PHYBench-fullques_v1.json``: content -> input, answer -> target."""
    f = ctx.member(ctx.find(path), "PHYBench-fullques_v1.json")
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list", file=f)
    items = []
    for i, it in enumerate(data):
        need(ctx, it, ("content", "answer"), file=f, where=f"[{i}]")
        items.append((f"[{i}]", {"input": it["content"], "target": it["answer"]}))
    return rows(items, f)


LOADERS = {
    "PhyBenchDataset": phybench,
}
