"""StoryCloze (story endings): its loaders."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, need
from promptweave.data.loaders.classify import json_records, mapped, table

# -- XStoryCloze: <lang>_train.jsonl and <lang>_eval.jsonl together as the test split -------------------------


def _storycloze(ctx: LoadContext, path: str, lang: str, *, letter: bool) -> list[tuple[str, dict[str, Any]]]:
    items = []
    for f in ctx.files(path, [f"{lang}_{s}.jsonl" for s in ("train", "eval")]):
        for loc, r in json_records(ctx, f):
            sentences = [f"input_sentence_{i}" for i in range(1, 5)]
            need(ctx, r, sentences + (["answer_right_ending"] if letter else []), file=f, where=loc)
            r["context"] = " ".join(str(r[k]) for k in sentences)
            if letter:
                r["answer_right_ending"] = mapped(ctx, f, "answer_right_ending", {1: "A", 2: "B"}, loc,
                                                   r["answer_right_ending"])
            items.append((f"{f.name} {loc}", r))
    return items


def storycloze(ctx: LoadContext, path: str, lang: str) -> Splits:
    """Both files' rows with ``context`` = the four story sentences joined by spaces, as the test split."""
    root = ctx.find(path)
    return {"test": table(_storycloze(ctx, path, lang, letter=False), root)}


def storycloze_v2(ctx: LoadContext, path: str, lang: str) -> Splits:
    """As :func:`storycloze`, with ``answer_right_ending`` 1 / 2 -> A / B, as one split."""
    return table(_storycloze(ctx, path, lang, letter=True), ctx.find(path))


LOADERS = {
    "StoryClozeDataset": storycloze,
    "StoryClozeDatasetV2": storycloze_v2,
}
