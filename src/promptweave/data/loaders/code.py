"""Code generation: HumanEval's JSONL and MBPP's JSONL (first rows as the train split, the rest as test)."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.sources import Split


def humaneval(ctx: LoadContext, path: str, num_repeats: int = 1, local_mode: bool = False) -> Splits:
    """JSONL of problems, each repeated ``num_repeats`` times in place."""
    f = ctx.find(path, local_mode=local_mode)
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, (), file=f, where=loc)
        items.extend((loc, dict(line)) for _ in range(int(num_repeats)))
    return rows(items, f)


def _mbpp(ctx: LoadContext, path: str, *, train: int, stop: int, repeats: int, kind: str,
          local_mode: bool = False) -> Splits:
    f = ctx.find(path, local_mode=local_mode)
    data = jsonl(f)

    def convert(loc: str, item: Any) -> dict[str, Any]:
        need(ctx, item, ("test_list", "task_id") + (("prompt",) if kind == "sanitized" else ()), file=f, where=loc)
        row = dict(item)
        tests = row["test_list"]
        joined = "\n".join(tests)
        if kind == "sanitized":
            row["text"] = row.pop("prompt")
        if kind == "v1":
            row["test_case"] = tests
            row["test_list"] = joined
            row["test_list_2"] = joined
        else:
            if kind == "v2":
                row["test_case"] = tests
            row["test_list"] = joined
            if kind == "sanitized":
                row["test_list_2"] = joined
            row["test_column"] = {"test_list_2": joined, "task_id": row["task_id"]}
        return row

    train_part = rows(((loc, convert(loc, it)) for loc, it in data[:train]), f)
    test_items = [(loc, convert(loc, it)) for loc, it in data[train:stop]]
    test_part = rows(test_items * int(repeats), f)
    return {"train": train_part, "test": Split(test_part.rows, test_part.file, test_part.where)}


def mbpp(ctx: LoadContext, path: str, local_mode: bool = False) -> Splits:
    """MBPP: rows 0-9 train, 10-509 test; ``test_list`` joined into one string, the list kept as ``test_case``."""
    return _mbpp(ctx, path, train=10, stop=510, repeats=1, kind="v1", local_mode=local_mode)


def mbpp_v2(ctx: LoadContext, path: str, num_repeats: int = 1) -> Splits:
    """As MBPPDataset, with ``test_column`` (joined tests + task id) for the pass@k evaluator."""
    return _mbpp(ctx, path, train=10, stop=510, repeats=num_repeats, kind="v2")


def sanitized_mbpp(ctx: LoadContext, path: str, num_repeats: int = 1) -> Splits:
    """Sanitized MBPP: rows 0-6 train, 7-263 test; ``prompt`` renamed ``text``."""
    return _mbpp(ctx, path, train=7, stop=264, repeats=num_repeats, kind="sanitized")


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
