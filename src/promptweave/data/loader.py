"""``load_dataset``: an OpenCompass-shaped dataset dict -> train and test rows as the retriever sees them."""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.data.columns import CONTENT_COLUMN, TemplateColumns, template_columns
from promptweave.data.loaders import load as run_loader
from promptweave.data.loaders import loader_name
from promptweave.data.reader import ReaderConfig, select_range
from promptweave.data.roots import check_read, data_scope
from promptweave.data.sources import (
    FILE_FORMATS,
    HF_BUILDERS,
    Split,
    is_hf_saved,
    read_file,
    read_hf_disk,
    read_hf_named,
    read_split_dir,
)
from promptweave.errors import DataError


@dataclass
class DatasetSplits:
    """Rows after the reader: ``train`` (examples to retrieve from) and ``test`` (rows to prompt)."""

    train: list[dict[str, Any]]
    test: list[dict[str, Any]]
    same_split: bool
    input_columns: list[str]
    output_column: str | None
    source: str
    abbr: str | None = None
    reader: ReaderConfig | None = None
    # Index of each row within its original split (before train_range / test_range).
    train_index: list[int] = field(default_factory=list)
    test_index: list[int] = field(default_factory=list)
    # The reference loader class that read the rows and how: "MMLUDataset (native)",
    # "XDataset (reference bridge: opencompass)"; None for a plain path or inline rows.
    loader: str | None = None


def load_dataset(dataset_cfg: Mapping[str, Any], *, base_dir: Path | str = ".", project: bool = True,
                 add_meta: bool = False, file: str | None = None) -> DatasetSplits:
    """Load the rows a dataset config names.

    Sources: inline ``rows`` (one split used for train and test) or ``train_rows``
    / ``test_rows``; ``path`` to a JSONL / JSON / CSV / TSV / Parquet file, a folder
    of per-split files (``train.jsonl``...), a ``datasets`` ``save_to_disk``
    folder, a packaged builder (``json``, ``csv``, ``parquet``) with
    ``data_files``, or a dataset name in the local Hugging Face cache. Relative
    paths are resolved against ``base_dir`` (the config file's folder).

    ``project`` keeps only the reader_cfg columns, input columns then the
    output column, plus the columns the templates name; rows read by a
    reference loader class (``type=``) always keep every column. ``add_meta`` appends
    ``subdivision`` (``<abbr>_<split>``) and ``idx`` (the row's index in its split).
    """
    if not isinstance(dataset_cfg, Mapping):
        raise DataError("a dataset config must be a dict", file=file, value=dataset_cfg)
    with data_scope(base_dir, file=file):  # safe mode: every file read below must lie under a data root
        return _load(dataset_cfg, base_dir=base_dir, project=project, add_meta=add_meta, file=file)


def _load(dataset_cfg: Mapping[str, Any], *, base_dir: Path | str, project: bool, add_meta: bool,
          file: str | None) -> DatasetSplits:
    reader = ReaderConfig.from_dict(dataset_cfg.get("reader_cfg"), file=file)
    abbr = dataset_cfg.get("abbr")
    used: str | None = None
    if loader_name(dataset_cfg) is not None and not _has_inline(dataset_cfg):
        loaded = run_loader(dataset_cfg, base_dir=base_dir, file=file)
        splits, source, used = loaded.splits, loaded.source, loaded.choice.label
    else:
        splits, source = _read_source(dataset_cfg, Path(base_dir), file)
    keep = template_columns(dataset_cfg.get("infer_cfg"))
    if used is not None:
        # A reference loader's rows stay whole, as in the reference: its templates fill from the whole row and
        # its evaluators read other columns of the test row (HumanEval's test / entry_point, MBPP's test_list).
        project = False

    if isinstance(splits, Split):
        train_part = test_part = splits
        train_name = test_name = "all"
    else:
        train_part = _pick(splits, reader.train_split, "train_split", source)
        test_part = _pick(splits, reader.test_split, "test_split", source)
        train_name, test_name = reader.train_split, reader.test_split
    same = train_part is test_part and reader.train_range == reader.test_range

    train, train_idx = _finish(train_part, train_name, reader.train_range, "train_range", reader, abbr,
                               project, add_meta, keep)
    if same:
        test, test_idx = list(train), list(train_idx)
    else:
        test, test_idx = _finish(test_part, test_name, reader.test_range, "test_range", reader, abbr,
                                 project, add_meta, keep)
    return DatasetSplits(train, test, same, list(reader.input_columns), reader.output_column, source,
                         abbr if isinstance(abbr, str) else None, reader, train_idx, test_idx, used)


def _has_inline(cfg: Mapping[str, Any]) -> bool:
    return "rows" in cfg or "train_rows" in cfg or "test_rows" in cfg


def _read_source(cfg: Mapping[str, Any], base: Path, file: str | None) -> tuple[Split | dict[str, Split], str]:
    if "rows" in cfg or "train_rows" in cfg or "test_rows" in cfg:
        return _inline(cfg, file)
    path = cfg.get("path")
    data_files = cfg.get("data_files")
    if not isinstance(path, str) or not path:
        if data_files is None:
            raise DataError("dataset config has no path, data_files or rows", file=file, field="path",
                            expected="a data file, folder, dataset name or inline rows")
        path = ""
    subset = cfg.get("name")
    if path in HF_BUILDERS:  # datasets' packaged builders over local files
        files = _resolve_files(data_files, base, file) if data_files is not None else None
        return read_hf_named(path, data_files=files, cache_dir=cfg.get("cache_dir")), f"datasets {path}: {files}"
    if data_files is not None:
        root = base / path if path and (base / path).is_dir() else base
        files = _resolve_files(data_files, root, file)
        if isinstance(files, dict):
            return {name: _one_file(p, file) for name, p in files.items()}, f"files: {files}"
        return _one_file(files, file), f"file: {files}"

    target = _target(base, path, file)
    if _exists(target):  # safe mode: named as written, so a refusal shows the link and where it leads
        check_read(base / os.path.expanduser(path), field="path", value=path)
    if _exists(target) and not target.is_dir():  # read_file refuses devices, FIFOs... naming the path
        return read_file(target), f"{FILE_FORMATS.get(target.suffix.lower(), 'file')}: {target}"
    if target.is_dir():
        if is_hf_saved(target):
            return read_hf_disk(target), f"datasets (saved): {target}"
        found = read_split_dir(target)
        if found is None:
            raise DataError("folder holds no data files", file=str(target),
                            expected="train/test files (" + ", ".join(sorted(FILE_FORMATS)) + ") or a saved dataset")
        return found, f"folder: {target}"
    looks_local = Path(path).suffix.lower() in FILE_FORMATS or path.startswith((".", "/", "~")) or "\\" in path
    if looks_local or path.count("/") > 1:
        raise DataError("data file or folder not found", file=str(target), field="path", value=path)
    try:
        got = read_hf_named(path, subset=subset, cache_dir=cfg.get("cache_dir"),
                            revision=cfg.get("revision") or cfg.get("hf_revision"))
    except DataError as exc:
        config = (file or "CONFIG").split(":")[0]
        raise DataError(f"{exc.message}; no local file or folder {target} either", file=path, field="path",
                        value=path, expected=f"a local file or folder, or a hub dataset: `promptweave data fetch "
                                             f"{config}` gets it into the Hugging Face cache") from None
    return got, f"datasets (cache): {path}"


def _target(base: Path, path: str, file: str | None) -> Path:
    """``path`` under ``base`` (``~`` expanded), resolved; a path no file system accepts is a typed error."""
    try:
        p = Path(path)
        try:
            p = p.expanduser()
        except RuntimeError:  # ~user with no such user: kept as written, reported as not found
            pass
        return (base / p).resolve()
    except (ValueError, OSError) as exc:
        raise DataError(f"not a usable file path ({exc})", file=file, field="path", value=path) from None


def _exists(p: Path) -> bool:
    try:
        return p.exists()
    except (OSError, ValueError):
        return False


def _one_file(p: str | list[str], file: str | None) -> Split:
    paths = [p] if isinstance(p, str) else p
    parts = []
    for one in paths:
        check_read(one, field="data_files", value=one)
        got = read_file(Path(one))
        if isinstance(got, dict):
            raise DataError("a data file named in data_files must hold a plain list of rows", file=one)
        parts.append(got)
    if len(parts) == 1:
        return parts[0]
    return Split([r for s in parts for r in s.rows], ", ".join(paths),
                 [f"{s.file}: {w}" for s in parts for w in s.where])


def _resolve_files(data_files: Any, root: Path, file: str | None) -> Any:
    def one(p: Any) -> str:
        if not isinstance(p, str) or not p:
            raise DataError("data_files entries must be file paths", file=file, field="data_files", value=p)
        return str(_target(root, p, file))

    if isinstance(data_files, str):
        return one(data_files)
    if isinstance(data_files, (list, tuple)):
        return [one(p) for p in data_files]
    if isinstance(data_files, Mapping):
        return {str(k): (one(v) if isinstance(v, str) else [one(x) for x in v]) for k, v in data_files.items()}
    raise DataError("data_files must be a path, a list of paths or a dict of split -> path(s)", file=file,
                    field="data_files", value=data_files)


def _inline(cfg: Mapping[str, Any], file: str | None) -> tuple[Split | dict[str, Split], str]:
    def rows_of(key: str) -> Split:
        rows = cfg[key]
        if not isinstance(rows, Sequence) or isinstance(rows, (str, bytes)):
            raise DataError(f"{key} must be a list of row dicts", file=file, field=key, value=rows)
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise DataError("each row must be a dict", file=file, field=f"{key}[{i}]", value=row)
        return Split([dict(r) for r in rows], file or "<inline rows>", [f"{key}[{i}]" for i in range(len(rows))])

    if "rows" in cfg:
        if "train_rows" in cfg or "test_rows" in cfg:
            raise DataError("give either rows or train_rows/test_rows, not both", file=file, field="rows")
        return rows_of("rows"), "inline rows"
    if "test_rows" not in cfg:
        raise DataError("train_rows needs test_rows beside it", file=file, field="test_rows")
    reader = cfg.get("reader_cfg") or {}
    train_name = reader.get("train_split", "train") if isinstance(reader, Mapping) else "train"
    test_name = reader.get("test_split", "test") if isinstance(reader, Mapping) else "test"
    test = rows_of("test_rows")
    train = rows_of("train_rows") if "train_rows" in cfg else test
    return {train_name: train, test_name: test}, "inline train_rows/test_rows"


def _pick(splits: dict[str, Split], name: str, key: str, source: str) -> Split:
    if name not in splits:
        raise DataError(f"split {name!r} not found in {source}", field=f"reader_cfg.{key}", value=name,
                        expected="one of " + ", ".join(repr(s) for s in splits))
    return splits[name]


def _finish(part: Split, split_name: str, rng: Any, key: str, reader: ReaderConfig, abbr: Any,
            keep_columns_only: bool, add_meta: bool,
            keep: TemplateColumns | None = None) -> tuple[list[dict[str, Any]], list[int]]:
    if not part.rows:
        raise DataError(f"split {split_name!r} is empty", file=part.file)
    idx = select_range(len(part.rows), rng, file=part.file, field=f"reader_cfg.{key}")
    if not idx:
        raise DataError(f"{key} selects no rows of the {len(part.rows)} in split {split_name!r}", file=part.file,
                        field=f"reader_cfg.{key}", value=rng)
    cols = reader.columns
    extra = [c for c in (keep.names if keep else ()) if c not in cols]
    multimodal = bool(keep and keep.multimodal)
    out = []
    for i in idx:
        row = part.rows[i]
        if not isinstance(row, Mapping):
            raise DataError("a row must be a dict of column -> value", file=part.file, field=part.locate(i),
                            value=type(row).__name__)
        # AISBench's multimodal loaders put the whole prompt in ``content``; their reader_cfg input columns
        # name fields the rows never have, and AISBench's reader does not require them.
        tolerate = multimodal and CONTENT_COLUMN in row
        for c in cols:
            if c not in row and not (tolerate and c != reader.output_column):
                raise DataError(f"row has no column {c!r}", file=part.file, field=f"{part.locate(i)}",
                                expected="columns " + ", ".join(repr(x) for x in cols)
                                + " (present: " + ", ".join(repr(k) for k in row) + ")")
        if keep_columns_only:
            new = {c: row[c] for c in cols if c in row}
            new.update((c, row[c]) for c in extra if c in row)
        else:
            new = dict(row)
        if add_meta:
            new["subdivision"] = f"{abbr}_{split_name}"
            new["idx"] = i
        out.append(new)
    return out, idx
