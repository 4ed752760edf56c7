"""ARC (AI2 Reasoning Challenge, Easy and Challenge): its loader."""
from __future__ import annotations

from pathlib import Path

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.loaders.choice import ABCD
from promptweave.data.sources import Split


def _arc_file(ctx: LoadContext, f: Path) -> Split:
    items = []
    for loc, item in jsonl(f, errors="ignore"):
        need(ctx, item, ("question", "answerKey"), file=f, where=loc)
        q = need(ctx, item["question"], ("stem", "choices"), file=f, where=loc + ".question")
        choices = q["choices"]
        if len(choices) != 4:
            continue
        labels = [c["label"] for c in choices]
        if item["answerKey"] not in labels:
            raise ctx.fail("answerKey is not one of the choice labels", file=f, where=loc, value=item["answerKey"])
        items.append((loc, {"question": q["stem"], "answerKey": ABCD[labels.index(item["answerKey"])],
                            **{f"text{ABCD[i]}": choices[i]["text"] for i in range(4)}}))
    return rows(items, f)


def arc(ctx: LoadContext, path: str, name: str | None = None) -> Splits:
    """OpenCompass: one JSONL file (``name`` unused). AISBench: a folder of ``<name>-Dev.jsonl`` and
    ``<name>-Test.jsonl`` (splits Dev / Test). Questions without exactly 4 choices are dropped; the answer key
    becomes a letter A-D."""
    found = ctx.find(path)
    if found.is_dir():
        if not name:
            raise ctx.fail("ARCDataset over a folder needs name (e.g. 'ARC-c')", where="name")
        splits = ("Dev", "Test")
        return {split: _arc_file(ctx, f)
                for split, f in zip(splits, ctx.members(found, *[f"{name}-{s}.jsonl" for s in splits]))}
    return _arc_file(ctx, found)


LOADERS = {
    "ARCDataset": arc,
}
