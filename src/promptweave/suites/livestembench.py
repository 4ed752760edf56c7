"""LiveStemBench: its loader (options appended, optional seeded sample)."""
from __future__ import annotations

import random
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need
from promptweave.data.loaders.classify import table
from promptweave.data.sources import Split


def livestembench(ctx: LoadContext, path: str, num_examples: int | None = None, n_repeats: int = 1,
                  version: str = "livestembench-20241227", **_: Any) -> Splits:
    """``<path>/<version>.json``: ``question`` with the options on following lines, ``answer``; ``num_examples``
    samples rows with seed 0; rows repeated ``n_repeats`` times; the same rows as train and test."""
    f = ctx.member(ctx.find(path), f"{version}.json")
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list of questions", file=f)
    picked = []
    for i, r in enumerate(data):
        need(ctx, r, ("question", "answer", "options"), file=f, where=f"[{i}]")
        q = r["question"] + "\n" + "\n".join(r["options"]) if len(r["options"]) > 0 else r["question"]
        picked.append((f"[{i}]", {"question": q, "answer": r["answer"]}))
    if num_examples:
        if n_repeats != 1:
            raise ctx.fail("n_repeats is only supported without num_examples", where="n_repeats", value=n_repeats)
        picked = random.Random(0).sample(picked, num_examples)
    picked = picked * int(n_repeats)
    one = table(picked, f)
    return {"train": one, "test": Split(list(one.rows), one.file, list(one.where))}


LOADERS = {
    "LiveStemBenchDataset": livestembench,
}
