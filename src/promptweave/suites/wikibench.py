"""WikiBench (Chinese Wikipedia multiple choice): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.loaders.choice import circular_rows, numbered_options


def wikibench(ctx: LoadContext, path: str, filename: str, name: str) -> Splits:
    """``<path><filename>`` (joined by plain concatenation, as the reference does): cloze rows keep
    question/answer, ``circular`` ones become four rotated copies, others get numbered options appended."""
    f = ctx.concat(path, filename)
    items = []
    for n, (loc, entry) in enumerate(jsonl(f)):
        need(ctx, entry, ("question", "answer"), file=f, where=loc)
        if "cloze" in name:
            items.append((loc, {"question": entry["question"].strip(), "answer": entry["answer"].strip()}))
        elif "circular" in name:
            items.extend(circular_rows(ctx, entry, n, f, loc))
        else:
            need(ctx, entry, ("options",), file=f, where=loc)
            row = dict(entry)
            row["question"] = entry["question"].strip() + "\n" + numbered_options(entry["options"])
            items.append((loc, row))
    return rows(items, f)


LOADERS = {
    "WikiBenchDataset": wikibench,
}
