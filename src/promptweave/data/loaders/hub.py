"""Datasets the references open with ``datasets.load_dataset``: a local dataset folder or file, a packaged builder
(``json`` / ``csv`` / ``parquet``) over local ``data_files``, or a name already in the local Hugging Face cache.
Never the network: promptweave sets the offline switches for the call (see ``sources.read_hf_named``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.sources import (
    FILE_FORMATS,
    HF_BUILDERS,
    Split,
    is_hf_saved,
    missing_extra,
    read_file,
    read_hf_disk,
    read_hf_named,
    read_split_dir,
)
from promptweave.errors import DataError, MissingExtraError


def read_folder(ctx: LoadContext, root: Path) -> Splits:
    """``datasets.load_dataset(<local folder or file>)``: a saved dataset, per-split files, or a data file."""
    if root.is_file():
        return read_file(root)
    if is_hf_saved(root):
        return read_hf_disk(root)
    try:
        return read_hf_named(str(root))
    except MissingExtraError as exc:  # no `datasets` here: plain per-split files still read, else say why
        found = read_split_dir(root)
        if found is None:
            if any(root.rglob("*.parquet")) or any(root.rglob("*.arrow")):
                raise missing_extra("reading this dataset folder's Parquet/Arrow files", ("datasets", "pyarrow"),
                                    str(root)) from None
            raise exc.at(file=str(root)) from None
        return found
    except DataError:
        found = read_split_dir(root)
        if found is None:
            raise ctx.fail("the dataset folder holds no data files datasets can read", file=root) from None
        return found


def hf_dataset(ctx: LoadContext, path: str | None = None, name: str | None = None, data_files: Any = None,
               split: str | None = None, revision: str | None = None, **kwargs: Any) -> Splits:
    """OpenCompass's ``HFDataset``: ``datasets.load_dataset(**kwargs)`` with ``data_files`` resolved as a local
    path under the data cache (``local_mode``); a hub id is read from the hub cache's snapshot at ``revision``."""
    if kwargs:
        bad = min(kwargs)
        raise ctx.fail(f"HFDataset argument {bad!r} is not supported natively (offline, local data only)",
                       where=bad, value=kwargs[bad])
    if path is None:
        raise ctx.fail("HFDataset needs path (a builder such as 'json', or a dataset name / folder)", where="path")
    files = _data_files(ctx, data_files) if data_files is not None else None
    if path in HF_BUILDERS:
        got: Splits = read_hf_named(path, subset=name, data_files=files)
    elif files is None and (Path(path).suffix.lower() in FILE_FORMATS or path.startswith((".", "/", "~"))):
        got = read_folder(ctx, ctx.find(path, local_mode=True))
    else:
        got = read_hf_named(path, subset=name, data_files=files, revision=revision)
    if split is None:
        return got
    return _split(ctx, got, split)


def _data_files(ctx: LoadContext, data_files: Any) -> Any:
    if isinstance(data_files, str):
        return str(ctx.find(data_files, local_mode=True, field="data_files"))
    if isinstance(data_files, (list, tuple)):
        return [str(ctx.find(p, local_mode=True, field=f"data_files[{i}]")) for i, p in enumerate(data_files)]
    if isinstance(data_files, dict):
        return {k: _data_files(ctx, v) for k, v in data_files.items()}
    raise ctx.fail("data_files must be a path, a list of paths or a dict of split -> path(s)", where="data_files",
                   value=data_files)


def _split(ctx: LoadContext, got: Splits, split: str) -> Split:
    """``split='train'`` (or ``'train[:10]'``) picks one split, as ``load_dataset(split=...)`` does."""
    base, _, rng = split.partition("[")
    if isinstance(got, dict):
        if base not in got:
            raise ctx.fail(f"split {base!r} not found", where="split", value=split)
        part = got[base]
    else:
        part = got
    if not rng:
        return part
    from promptweave.data.reader import select_range

    idx = select_range(len(part.rows), "[" + rng, file=ctx.file, field="split")
    return Split([part.rows[i] for i in idx], part.file, [part.locate(i) for i in idx])


def hle(ctx: LoadContext, path: str, category: str | None = None) -> Splits:
    """Humanity's Last Exam: the test split's text-only questions (``image == ''``), optionally one ``category``;
    ``question`` renamed ``problem``; the same rows as train and test."""
    got = read_folder(ctx, ctx.find(path))
    if not isinstance(got, dict) or "test" not in got:
        raise ctx.fail("the HLE dataset needs a test split", file=ctx.find(path))
    part = got["test"]
    items, where = [], []
    for i, row in enumerate(part.rows):
        if row.get("image") != "" or (category and row.get("category") != category):
            continue
        new = {("problem" if k == "question" else k): v for k, v in row.items()}
        items.append(new)
        where.append(part.locate(i))
    out = dict(got)
    out["train"] = out["test"] = Split(items, part.file, where)
    return out


def _one(ctx: LoadContext, got: Splits, split: str) -> Split:
    if isinstance(got, Split):
        return got
    if split not in got:
        raise ctx.fail(f"the dataset has no {split!r} split", value=sorted(got))
    return got[split]


def _map(got: Splits, fn) -> Splits:
    def one(part: Split) -> Split:
        return Split([fn(dict(r)) for r in part.rows], part.file, list(part.where))

    return one(got) if isinstance(got, Split) else {k: one(v) for k, v in got.items()}


def iwslt2017(ctx: LoadContext, **kwargs: Any) -> Splits:
    """``load_dataset(**kwargs)`` with each row's ``translation`` dict spread into columns (and dropped)."""
    got = hf_dataset(ctx, **kwargs)

    def spread(row: dict[str, Any]) -> dict[str, Any]:
        tr = row.pop("translation", None) or {}
        return {**row, **tr}

    return _map(got, spread)


def cluewsc(ctx: LoadContext, **kwargs: Any) -> Splits:
    """CLUEWSC: the pronoun (``span2_index``) replaced by its referent in ``new_text``; ``answer`` 1/0 from
    ``label``; ``span1`` / ``span2`` taken out of ``target``."""
    got = hf_dataset(ctx, **kwargs)

    def prep(row: dict[str, Any]) -> dict[str, Any]:
        target = row.pop("target", None) or {}
        chars = list(row.get("text", ""))
        idx = target.get("span2_index")
        if isinstance(idx, int) and 0 <= idx < len(chars):
            chars[idx] = target.get("span1_text", "")
        row["new_text"] = "".join(chars)
        row["answer"] = 1 if row.get("label") == "true" else 0
        row["span1"], row["span2"] = target.get("span1_text"), target.get("span2_text")
        return row

    return _map(got, prep)


def olymmath(ctx: LoadContext, path: str, subset: str) -> Splits:
    """``load_dataset(path, subset)`` from a local folder or the local Hugging Face cache."""
    return hf_dataset(ctx, path=path, name=subset)


def smolinstruct(ctx: LoadContext, path: str, name: str, mini_set: bool = False) -> Splits:
    """Rows of one ``task`` from the validation and test splits; ``mini_set`` samples 500 test rows with the
    reference's seed (1024)."""
    import random

    got = read_folder(ctx, ctx.find(path)) if _local(path) else read_hf_named(path)
    out = {}
    for split in ("validation", "test"):
        part = _one(ctx, got, split)
        picked = [(part.locate(i), r) for i, r in enumerate(part.rows) if r.get("task") == name]
        if mini_set and split == "test":
            picked = random.Random(1024).sample(picked, min(500, len(picked)))
        out[split] = Split([r for _, r in picked], part.file, [w for w, _ in picked])
    return out


def mrcr(ctx: LoadContext, path: str = "giulio98/MRCR_v2_common", subset: str = "2needle_in_4096_8192",
         **_: Any) -> Splits:
    """MRCR test rows: context, question and ``gold`` (JSON of the first answer and the hash prefix that the
    question asks to prepend)."""
    import json
    import re

    got = hf_dataset(ctx, path=path, name=subset, split="test")
    assert isinstance(got, Split)
    out = []
    for row in got.rows:
        m = re.search(r"Prepend\s+(\S+)\s+to", row.get("question", ""))
        out.append({"context": row.get("context"), "question": row.get("question"),
                    "gold": json.dumps({"answer": row["answers"][0], "prefix": m.group(1) if m else ""})})
    return Split(out, got.file, list(got.where))


def _local(path: str) -> bool:
    from promptweave.data.locate import is_data_id

    return is_data_id(path) or path.startswith((".", "/", "~")) or Path(path).suffix.lower() in FILE_FORMATS


def chid(ctx: LoadContext, **kwargs: Any) -> Splits:
    """CHID: ``content<i>`` = the passage with ``#idiom#`` replaced by candidate i."""
    got = hf_dataset(ctx, **kwargs)

    def prep(row: dict[str, Any]) -> dict[str, Any]:
        for i, c in enumerate(row.get("candidates") or []):
            row[f"content{i}"] = str(row.get("content", "")).replace("#idiom#", c)
        return row

    return _map(got, prep)


def _binary_answer(row: dict[str, Any]) -> dict[str, Any]:
    row["answer"] = 1 if row.get("label") == "true" else 0
    return row


def boolq(ctx: LoadContext, **kwargs: Any) -> Splits:
    """SuperGLUE BoolQ through ``load_dataset``: ``answer`` 1 / 0 from ``label`` 'true' / other."""
    return _map(hf_dataset(ctx, **kwargs), _binary_answer)


def wic(ctx: LoadContext, **kwargs: Any) -> Splits:
    """WiC through ``load_dataset``: ``answer`` 1 / 0 from ``label`` 'true' / other."""
    return _map(hf_dataset(ctx, **kwargs), _binary_answer)


def csl(ctx: LoadContext, **kwargs: Any) -> Splits:
    """CSL through ``load_dataset``: ``keywords`` = the keyword list joined by a full-width comma."""

    def prep(row: dict[str, Any]) -> dict[str, Any]:
        row["keywords"] = "，".join(row.get("keyword") or [])
        return row

    return _map(hf_dataset(ctx, **kwargs), prep)


def crowspairs_v2(ctx: LoadContext, **kwargs: Any) -> Splits:
    """CrowS-Pairs through ``load_dataset``; every row's ``label`` is 'A' (the stereotypical sentence first)."""

    def prep(row: dict[str, Any]) -> dict[str, Any]:
        row["label"] = "A"
        return row

    return _map(hf_dataset(ctx, **kwargs), prep)


def simpleqa(ctx: LoadContext, path: str, num_examples: int | None = None, n_repeats: int = 1,
             **_: Any) -> Splits:
    """One CSV (types inferred as pandas does), optionally ``num_examples`` sampled with seed 0, repeated
    ``n_repeats`` times; the same rows as train and test."""
    import random

    f = ctx.find(path)
    got = read_hf_named("csv", data_files={"train": str(f)})
    part = _one(ctx, got, "train")
    picked = list(zip(part.where, part.rows))
    if num_examples:
        if n_repeats != 1:
            raise ctx.fail("n_repeats is only supported without num_examples", where="n_repeats", value=n_repeats)
        picked = random.Random(0).sample(picked, num_examples)
    picked = picked * int(n_repeats)
    one = Split([r for _, r in picked], part.file, [w for w, _ in picked])
    return {"train": one, "test": Split(list(one.rows), one.file, list(one.where))}
