"""MatBench (materials science): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need, rows


def matbench(ctx: LoadContext, path: str, task: str) -> Splits:
    """``<path>/matbench_base_fold_0_<task>_test.json``: a list of {problem, answer}."""
    f = ctx.member(ctx.find(path), f"matbench_base_fold_0_{task}_test.json")
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list", file=f)
    items = []
    for i, it in enumerate(data):
        need(ctx, it, ("problem", "answer"), file=f, where=f"[{i}]")
        items.append((f"[{i}]", {"problem": it["problem"], "answer": it["answer"]}))
    return rows(items, f)


LOADERS = {
    "MatbenchDataset": matbench,
}
