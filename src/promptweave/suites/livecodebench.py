"""LiveCodeBench / LCBench: its loader (the scoring runs in the code sandbox, evaluate/code_exec.py)."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows


def lc(ctx: LoadContext, path: str, num_repeats: int = 1, difficulty: str = "ALL", local_mode: bool = False) -> Splits:
    """LCBench JSONL: rows 0-4 train, the rest test, optionally one ``Difficulty``; tests joined, the list kept as
    ``test_case``, ``test_column`` keyed by ``Contest id``."""
    f = ctx.find(path, local_mode=local_mode)
    data = jsonl(f)

    def convert(loc: str, item: Any) -> dict[str, Any]:
        need(ctx, item, ("test_list", "Contest id"), file=f, where=loc)
        row = dict(item)
        row["test_case"] = row["test_list"]
        row["test_list"] = "\n".join(row["test_list"])
        row["test_column"] = {"test_list_2": row["test_list"], "task_id": row["Contest id"]}
        return row

    def keep(item: dict[str, Any]) -> bool:
        return difficulty == "ALL" or item.get("Difficulty") == difficulty

    train = [(loc, convert(loc, it)) for loc, it in data[:5]]
    test = [(loc, convert(loc, it)) for loc, it in data[5:]]
    train = [(loc, r) for loc, r in train if keep(r)]
    test = [(loc, r) for loc, r in test if keep(r)] * int(num_repeats)
    return {"train": rows(train, f), "test": rows(test, f)}


LOADERS = {
    "LCDataset": lc,
}
