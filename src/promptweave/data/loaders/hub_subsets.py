"""Hub datasets the references open with ``datasets.load_dataset(path, name=<subset>)`` whose subsets are plain
JSONL files (LEval's ``L4NLP/LEval``, LV-Eval's ``Infinigence/LVEval``).

The hub repositories hold a loading script and one JSONL file per subset; the reference runs the script (online,
or from the Hugging Face cache). Here nothing of the folder runs: the subset's file is looked for in the folder
that ``path`` names (found by the OpenCompass path rules: ``$COMPASS_DATA_CACHE``, the working directory,
``~/.cache/opencompass``, the config's folder), at the places a family lists (its repository layout first); a
``path`` that is itself a file is read as the subset; a packaged builder (``path='json'``) reads ``data_files``;
a hub id with no local folder is read from the local Hugging Face cache, offline. Each gives the raw records of
the ``test`` split, which the family's loader reshapes as its reference class does.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, jsonl, rows
from promptweave.data.sources import HF_BUILDERS, Split, read_file, read_hf_named
from promptweave.errors import DataNotFoundError, PromptweaveError

Places = Callable[[Path, str], list[Path]]


def _checked_name(ctx: LoadContext, name: Any) -> str:
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ctx.fail("name must be the dataset's subset (e.g. 'coursera')", where="name", value=name)
    return name


def _records(ctx: LoadContext, f: Path) -> Split:
    """The records of one subset file: JSONL (the repositories' format), else any file format promptweave reads."""
    if f.suffix.lower() in (".jsonl", ".ndjson", ""):
        return rows(jsonl(f), f)
    got = read_file(f)
    if isinstance(got, dict):
        if "test" not in got:
            raise ctx.fail("the data file holds named splits but no 'test' split", file=f, value=sorted(got))
        return got["test"]
    return got


def _data_files(ctx: LoadContext, data_files: Any) -> Path:
    """``data_files`` as the reference resolves it (``get_data_path(..., local_mode=True)``): one file, or the
    ``test`` entry of a split dict."""
    if isinstance(data_files, Mapping):
        if "test" not in data_files:
            raise ctx.fail("data_files needs a 'test' entry (the split the reference reads)", where="data_files",
                           value=sorted(map(str, data_files)))
        data_files = data_files["test"]
    if isinstance(data_files, (list, tuple)) and len(data_files) == 1:
        data_files = data_files[0]
    if not isinstance(data_files, str):
        raise ctx.fail("data_files must be one file (or {'test': file})", where="data_files", value=data_files)
    return ctx.find(data_files, local_mode=True, field="data_files")


def subset_records(ctx: LoadContext, path: Any, name: Any, places: Places, *, data_files: Any = None,
                   layout: str) -> Split:
    """The raw records of subset ``name`` of the dataset at ``path`` (see the module docstring)."""
    if data_files is not None:
        return _records(ctx, _data_files(ctx, data_files))
    if isinstance(path, str) and path in HF_BUILDERS:
        raise ctx.fail(f"path={path!r} (a packaged builder) needs data_files=", where="data_files")
    try:
        found = ctx.find(path)
    except DataNotFoundError as missing:
        if not (isinstance(path, str) and "/" in path and not path.startswith((".", "/", "~"))):
            raise
        sub = _checked_name(ctx, name) if name is not None else None
        try:  # a hub id: the Hugging Face cache, offline; the local layout's error if it is not there either
            got = read_hf_named(path, subset=sub)
        except PromptweaveError:
            raise DataNotFoundError(missing.message, file=missing.file, field=missing.field, value=path,
                                    expected=f"{layout}, under one of the folders tried (promptweave never "
                                    "downloads), or the dataset in the local Hugging Face cache") from None
        if isinstance(got, dict):
            if "test" not in got:
                raise ctx.fail("the cached dataset has no 'test' split", file=path, value=sorted(got)) from None
            return got["test"]
        return got
    if found.is_file():
        return _records(ctx, found)
    sub = _checked_name(ctx, name)
    cands = places(found, sub)
    for c in cands:
        if c.is_file():
            return _records(ctx, c)
    raise ctx.fail(f"subset {sub!r} not found in {found}; tried " + ", ".join(str(c) for c in cands)
                   + f" ({layout})", file=found, where="name", value=sub)


__all__ = ["subset_records"]
