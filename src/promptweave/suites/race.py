"""RACE (English exam reading comprehension): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.loaders.choice import ABCD


def race(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/{validation,test}/<name>.jsonl`` (name: ``high`` / ``middle``)."""
    splits = ("validation", "test")
    out = {}
    for split, f in zip(splits, ctx.files(path, [f"{s}/{name}.jsonl" for s in splits])):
        items = []
        for loc, line in jsonl(f):
            need(ctx, line, ("article", "question", "options", "answer"), file=f, where=loc)
            opts = line["options"]
            items.append((loc, {"article": line["article"], "question": line["question"],
                                **{ABCD[i]: opts[i] for i in range(4)}, "answer": line["answer"]}))
        out[split] = rows(items, f)
    return out


LOADERS = {
    "RaceDataset": race,
}
