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


def one_split(ctx: LoadContext, got: Splits, split: str) -> Split:
    if isinstance(got, Split):
        return got
    if split not in got:
        raise ctx.fail(f"the dataset has no {split!r} split", value=sorted(got))
    return got[split]


def map_rows(got: Splits, fn) -> Splits:
    def one(part: Split) -> Split:
        return Split([fn(dict(r)) for r in part.rows], part.file, list(part.where))

    return one(got) if isinstance(got, Split) else {k: one(v) for k, v in got.items()}


def binary_answer(row: dict[str, Any]) -> dict[str, Any]:
    row["answer"] = 1 if row.get("label") == "true" else 0
    return row
