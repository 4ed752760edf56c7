"""MMLU and its relatives (MMLU-Pro, MMLU-CF, MMLU-Arabic, CMMLU): their loaders."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, csv_records, need, rows
from promptweave.data.loaders.hub import hf_dataset, read_folder
from promptweave.data.sources import Split


def _fields(ctx: LoadContext, rec: list[str], n: int, file: Path, where: str) -> list[str]:
    if len(rec) != n:
        raise ctx.fail(f"expected {n} CSV fields per record", file=file, where=where, value=len(rec))
    return rec


_CHOICES = "ABCDEFGHIJKLMNOP"


def mmlu(ctx: LoadContext, path: str, name: str, **_: Any) -> Splits:
    """``<path>/{dev,test}/<name>_<split>.csv``, no header: question, A-D, answer letter."""
    return _mmlu_csv(ctx, ctx.find(path), name)


def _mmlu_csv(ctx: LoadContext, root: Path, name: str) -> Splits:
    splits = ("dev", "test")
    out = {}
    for split, f in zip(splits, ctx.members(root, *[f"{s}/{name}_{s}.csv" for s in splits])):
        out[split] = rows(((loc, dict(zip(("input", "A", "B", "C", "D", "target"), _fields(ctx, r, 6, f, loc))))
                           for loc, r in csv_records(f)), f)
    return out


def mmlu_arabic(ctx: LoadContext, path: str, name: str) -> Splits:
    """MMLU's layout found as a local path (``local_mode``)."""
    return _mmlu_csv(ctx, ctx.find(path, local_mode=True), name)


def cmmlu(ctx: LoadContext, path: str, name: str, **_: Any) -> Splits:
    """``<path>/{dev,test}/<name>.csv`` with a header: index, question, A-D, answer."""
    splits = ("dev", "test")
    out = {}
    for split, f in zip(splits, ctx.files(path, [f"{s}/{name}.csv" for s in splits])):
        recs = csv_records(f)[1:]
        out[split] = rows(((loc, dict(zip(("question", "A", "B", "C", "D", "answer"),
                                          _fields(ctx, r, 7, f, loc)[1:]))) for loc, r in recs), f)
    return out


def mmlu_pro(ctx: LoadContext, path: str, category: str) -> Splits:
    """The MMLU-Pro dataset folder (a ``datasets`` layout), rows of one ``category``, with ``options_str``
    (lettered options, ``N/A`` skipped) and ``answer_string`` (the answer's lettered line) added."""
    got = read_folder(ctx, ctx.find(path))
    parts = got if isinstance(got, dict) else {"train": got}
    out = {}
    for split, part in parts.items():
        items = []
        for i, item in enumerate(part.rows):
            if item.get("category") != category:
                continue
            row = dict(item)
            text, row["answer_string"] = "", ""
            for k, opt in enumerate(row.get("options") or []):
                if opt == "N/A":
                    continue
                option = f"{_CHOICES[k]}. {opt}\n"
                text += option
                if row.get("answer") == _CHOICES[k]:
                    row["answer_string"] = option
            row["options_str"] = text.strip()
            items.append((part.locate(i), row))
        out[split] = rows(items, part.file)
    return out if isinstance(got, dict) else out["train"]


def mmlu_cf(ctx: LoadContext, path: str, name: str) -> Splits:
    """The ``<name>_dev`` and ``<name>_val`` splits (a local dataset folder or the local Hugging Face cache) as
    ``dev`` and ``test``, each row with ``input`` = ``Question`` and ``target`` = ``Answer`` added."""
    got = hf_dataset(ctx, path=path)
    out = {}
    for split, source in (("dev", f"{name}_dev"), ("test", f"{name}_val")):
        part = got.get(source) if isinstance(got, dict) else None
        if part is None:
            raise ctx.fail(f"the dataset has no {source!r} split", where="name", value=name)
        rows = []
        for i, r in enumerate(part.rows):
            need(ctx, r, ("Question", "A", "B", "C", "D", "Answer"), file=part.file, where=part.locate(i))
            rows.append({**r, "input": r["Question"], "target": r["Answer"]})
        out[split] = Split(rows, part.file, list(part.where))
    return out


LOADERS = {
    "MMLUDataset": mmlu,
    "CMMLUDataset": cmmlu,
    "MMLUProDataset": mmlu_pro,
    "MMLUArabicDataset": mmlu_arabic,
    "MMLUCFDataset": mmlu_cf,
}
