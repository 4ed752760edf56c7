"""Game of 24 (OpenCompass's ``Game24Dataset``): the ``Puzzles`` column of a CSV file (a path starting with
``/``, ``./`` or ``../``) or of a Hugging Face dataset's train split (local cache only); the reference keeps
puzzles 900-904 of it, each as both ``input`` and ``output``."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, csv_records, rows
from promptweave.data.loaders.hub import hf_dataset
from promptweave.data.sources import Split

_KEEP = slice(900, 905)  # the reference's fixed slice of the puzzle list


def game24(ctx: LoadContext, path: str) -> Splits:
    if str(path).startswith(("/", "./", "../")):
        f = ctx.find(path, local_mode=True)
        records = csv_records(f)
        if not records or "Puzzles" not in records[0][1]:
            raise ctx.fail("expected a CSV file with a 'Puzzles' column", file=f,
                           value=records[0][1][:12] if records else None)
        col = records[0][1].index("Puzzles")
        puzzles = [(loc, rec[col] if col < len(rec) else "") for loc, rec in records[1:]]
        return rows(((loc, {"input": p, "output": p}) for loc, p in puzzles[_KEEP]), f)
    got = hf_dataset(ctx, path=path, split="train")
    assert isinstance(got, Split)
    if got.rows and "Puzzles" not in got.rows[0]:
        raise ctx.fail("the dataset's train split has no 'Puzzles' column", value=sorted(got.rows[0])[:12])
    idx = range(len(got.rows))[_KEEP]
    return Split([{"input": got.rows[i]["Puzzles"], "output": got.rows[i]["Puzzles"]} for i in idx], got.file,
                 [got.locate(i) for i in idx])
