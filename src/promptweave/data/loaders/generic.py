"""Plain row files: CustomDataset / JsonlDataset, MGSM, StrategyQA, plain JSONL, and the relabelling helper the
classification suites share (BoolQ, CMNLI, IFEval, LAMBADA are in ``suites/``)."""
from __future__ import annotations

from pathlib import Path

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    csv_records,
    jsonl,
    need,
    rows,
)


def custom(ctx: LoadContext, path: str, file_name: str | None = None, local_mode: bool = False,
           meta_path: str = "") -> Splits:
    """One ``.jsonl`` or ``.csv`` file (``file_name`` joined onto ``path`` when given), BOM tolerated.

    AISBench's variant (an ``ais_bench/...`` path) also renames a row's ``max_tokens`` to ``max_out_len`` (a row
    without one has it empty: the model's length, work/out_len.py); its
    ``meta_path`` sampling file is not read natively."""
    if meta_path:
        raise ctx.fail("AISBench's meta_path sampling is not implemented natively; leave meta_path='' or install "
                       "ais_bench", where="meta_path", value=meta_path)
    located = ctx.locate(path, local_mode=local_mode)
    f = located.path
    if file_name is not None:
        f = ctx.member(f, file_name)
    got = _rows_file(ctx, f)
    if located.rule == "aisbench":
        for row in got.rows:
            if "max_tokens" in row:
                row["max_out_len"] = row.pop("max_tokens")
            else:  # AISBench's shipped custom configs read a max_out_len column most files do not have: empty
                row.setdefault("max_out_len", None)
    return got


def _rows_file(ctx: LoadContext, f: Path) -> Splits:
    name = f.name.lower()
    if name.endswith(".jsonl"):
        return rows(((loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)), f)
    if name.endswith(".csv"):
        recs = csv_records(f)
        if not recs:
            raise ctx.fail("the CSV file is empty (no header line)", file=f)
        header = recs[0][1]
        return rows(((loc, dict(zip(header, r))) for loc, r in recs[1:]), f)
    raise ctx.fail("CustomDataset reads .jsonl or .csv files", file=f, value=f.suffix)


def jsonl_rows(ctx: LoadContext, path: str) -> Splits:
    """One JSONL file found as a local path, rows as stored."""
    f = ctx.find(path, local_mode=True)
    return rows(((loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)), f)


def relabel(ctx: LoadContext, f: Path, mapping: dict[str, str], *, skip: str | None = None) -> Splits:
    items = []
    for loc, line in jsonl(f):
        row = dict(need(ctx, line, ("label",), file=f, where=loc))
        if skip is not None and row["label"] == skip:
            continue
        if row["label"] not in mapping:
            raise ctx.fail("label is not one of " + ", ".join(map(repr, mapping)), file=f, where=loc,
                           value=row["label"])
        row["label"] = mapping[row["label"]]
        items.append((loc, row))
    return rows(items, f)


def plain_jsonl(ctx: LoadContext, path: str, **_: object) -> Splits:
    """One JSONL file, rows as stored (AISBench's AIME 2025/2026 loaders)."""
    f = ctx.find(path)
    return rows(((loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)), f)
