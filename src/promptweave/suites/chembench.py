"""ChemBench (chemistry multiple choice): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need, rows
from promptweave.data.loaders.choice import ABCD


def chembench(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/{dev,test}/<name>_benchmark.json``: lists of {question, A-D, answer} -> input, A-D, target."""
    root = ctx.find(path)
    out = {}
    for split in ("dev", "test"):
        f = ctx.member(root, split, f"{name}_benchmark.json")
        data = json_file(f)
        if not isinstance(data, list):
            raise ctx.fail("expected a JSON list of questions", file=f)
        items = []
        for i, item in enumerate(data):
            need(ctx, item, ("question", "A", "B", "C", "D", "answer"), file=f, where=f"[{i}]")
            items.append((f"[{i}]", {"input": item["question"], **{k: item[k] for k in ABCD},
                                     "target": item["answer"]}))
        out[split] = rows(items, f)
    return out


LOADERS = {
    "ChemBenchDataset": chembench,
}
