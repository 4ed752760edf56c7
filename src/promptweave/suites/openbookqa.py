"""OpenBookQA: its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.loaders.choice import ABCD


def obqa(ctx: LoadContext, path: str, name: str = "main") -> Splits:
    """OpenBookQA JSONL: A-D choice texts, ``question_stem``, ``answerKey``, and ``fact1`` when present."""
    f = ctx.find(path)
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, ("question", "answerKey"), file=f, where=loc)
        q = need(ctx, line["question"], ("stem", "choices"), file=f, where=loc + ".question")
        item = {**{ABCD[i]: q["choices"][i]["text"] for i in range(4)}, "question_stem": q["stem"],
                "answerKey": line["answerKey"]}
        if "fact1" in line:
            item["fact1"] = line["fact1"]
        items.append((loc, item))
    return rows(items, f)


LOADERS = {
    "OBQADataset": obqa,
}
