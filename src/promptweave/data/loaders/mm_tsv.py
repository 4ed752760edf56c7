"""AISBench's image-question sets stored as VLMEvalKit TSV files (InfoVQA here; DocVQA and MMStar in their suites)
and RealWorldQA's
Parquet shards: rows with a ``content`` column of ``<AIS_..._START>`` segments, built as the reference builds them.

TSV layout: a header row with ``index``, ``question``, ``answer``, ``image`` (base64; a value of at most 64
characters names another row's ``index`` whose image it shares; ``[...]`` is a list of images), optionally
``image_path`` (file names for the images) and, for MMStar, ``hint``, ``category``, ``l2-category``, ``split`` and
option columns ``A``.. ``Z``. Rows with an empty ``image`` are skipped. Each image is written once into
``<Name>_images/`` beside the TSV (``<index>.jpg``; ``<index>_<k>.png`` for a list; or the ``image_path`` names) and
the content names that file, as the reference does. The reference re-encodes the image through PIL when it writes
it; promptweave writes the decoded bytes as they are (PIL is not a dependency), so the file named in the prompt
holds the same picture in its original encoding. Cells are kept as text (the reference's pandas may read an all-
number column as numbers); a cell pandas reads as missing (empty, ``NA``, ``nan``, ``None``...) is missing here.
"""
from __future__ import annotations

import ast
import base64
import binascii
import os
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, csv_records, rows
from promptweave.errors import DataError
from promptweave.prompt.multimodal import build_content

# the strings pandas.read_csv reads as missing by default
_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                 "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
_IMAGE_REF_LEN = 64
_VQA_SUFFIX = "\nAnswer the question using a single word or phrase."


def is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v in _NA)


def _tsv(ctx: LoadContext, f: Path) -> list[tuple[str, dict[str, str]]]:
    records = csv_records(f, delimiter="\t")
    if not records:
        return []
    header = records[0][1]
    for col in ("index", "question"):
        if col not in header:
            raise ctx.fail(f"the TSV header has no {col!r} column", file=f, where="line 1", value=header[:12])
    out: list[tuple[str, dict[str, str]]] = []
    for loc, rec in records[1:]:
        if len(rec) != len(header):
            raise DataError(f"row has {len(rec)} fields but the header has {len(header)}", file=str(f), field=loc)
        out.append((loc, dict(zip(header, rec))))
    return out


def _as_list(ctx: LoadContext, v: str, f: Path, loc: str) -> list[str]:
    if len(v) >= 1 and v[0] == "[" and v[-1] == "]":
        try:
            got = ast.literal_eval(v)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise ctx.fail("a '[...]' cell must be a Python list literal", file=f, where=loc, value=v[:80]) from None
        if not isinstance(got, (list, tuple)):
            raise ctx.fail("a '[...]' cell must be a list", file=f, where=loc, value=v[:80])
        return [str(x) for x in got]
    return [v]


def _write_image(ctx: LoadContext, b64: str, target: Path, f: Path, loc: str) -> None:
    if target.exists():
        return
    try:
        data = base64.b64decode(b64, validate=False)
    except (binascii.Error, ValueError):
        raise ctx.fail("the image cell is not base64", file=f, where=loc, value=b64[:40]) from None
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    tmp.write_bytes(data)
    os.replace(tmp, target)  # a crash never leaves a truncated image that a later run would take as written


def rows_with_images(ctx: LoadContext, f: Path, folder: str) -> list[tuple[str, dict[str, str], list[str]]]:
    """(location, row, image file paths) for every row with an image, images written as the reference does."""
    records = _tsv(ctx, f)
    root = f.parent / folder
    has_image = bool(records) and "image" in records[0][1]
    if has_image:
        records = [(loc, r) for loc, r in records if not is_missing(r.get("image"))]
        by_index = {r["index"]: r["image"] for _, r in records}
    out = []
    for loc, r in records:
        if has_image:
            img = r["image"]
            if len(img) <= _IMAGE_REF_LEN:
                if img not in by_index:
                    raise ctx.fail("the image cell names no row's index (a short value refers to another row)",
                                   file=f, where=f"{loc} image", value=img)
                img = by_index[img]
            images = _as_list(ctx, img, f, loc)
            names = _as_list(ctx, r["image_path"], f, loc) if "image_path" in r else None
            if len(images) > 1:
                names = names or [f"{r['index']}_{k}.png" for k in range(len(images))]
                paths = [root / n for n in names[:len(images)]]
            elif names is not None:
                paths = [root / names[0]]
            else:
                paths = [root / f"{r['index']}.jpg"]
            for b64, p in zip(images, paths):
                _write_image(ctx, b64, p, f, loc)
        else:
            if "image_path" not in r:
                raise ctx.fail("a row needs an 'image' (base64) or 'image_path' column", file=f, where=loc)
            paths = [Path(p) for p in _as_list(ctx, r["image_path"], f, loc)]
            if not all(p.exists() for p in paths):
                paths = [root / p for p in paths]
        out.append((loc, r, [str(p) for p in paths]))
    return out


def vqa_splits(ctx: LoadContext, path: str, folder: str) -> Splits:
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r, paths in rows_with_images(ctx, f, folder):
        parts = [("image", p) for p in paths] + [("text", r["question"] + _VQA_SUFFIX)]
        items.append((loc, {"content": build_content(parts), "answer": r.get("answer")}))
    return rows(items, f)
