"""Read rows from local files and Hugging Face ``datasets``, remembering where each row came from."""
from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from promptweave.errors import DataError

FILE_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
                ".parquet": "parquet"}
HF_BUILDERS = {"json", "csv", "parquet", "text", "arrow"}


@dataclass
class Split:
    """Rows of one split plus, per row, where it was read (``line 12``, ``row 3``) for error messages."""

    rows: list[dict[str, Any]]
    file: str
    where: list[str] = field(default_factory=list)

    def locate(self, i: int) -> str:
        return self.where[i] if i < len(self.where) else f"row {i}"


def read_file(path: Path, *, fmt: str | None = None) -> Split | dict[str, Split]:
    """Read one file: a list of rows, or (JSON object of lists) several named splits."""
    fmt = fmt or FILE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise DataError(f"unknown data file type {path.suffix!r}", file=str(path),
                        expected="one of " + ", ".join(sorted(FILE_FORMATS)))
    if not path.is_file():
        raise DataError("data file not found", file=str(path))
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "json":
        return _read_json(path)
    if fmt in ("csv", "tsv"):
        return _read_csv(path, delimiter="\t" if fmt == "tsv" else ",")
    return _read_parquet(path)


def _read_jsonl(path: Path) -> Split:
    try:
        return _read_jsonl_lines(path)
    except UnicodeDecodeError as exc:  # reliability: bytes that are not UTF-8 are a typed error
        raise DataError(f"the file is not UTF-8 text ({exc.reason} at a byte {exc.object[exc.start:exc.start + 4]!r})",
                        file=str(path), expected="UTF-8 JSON lines") from None


def _read_jsonl_lines(path: Path) -> Split:
    rows, where = [], []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"malformed JSON: {exc.msg}", file=str(path),
                                field=f"line {lineno} column {exc.colno}") from None
            if not isinstance(row, dict):
                raise DataError("each line must be a JSON object", file=str(path), field=f"line {lineno}",
                                value=row)
            rows.append(row)
            where.append(f"line {lineno}")
    return Split(rows, str(path), where)


def _read_json(path: Path) -> Split | dict[str, Split]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON: {exc.msg}", file=str(path),
                        field=f"line {exc.lineno} column {exc.colno}") from None
    if isinstance(data, list):
        return _rows_of(data, str(path), "")
    if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
        return {name: _rows_of(v, str(path), name) for name, v in data.items()}
    raise DataError("a JSON data file must hold a list of row objects or an object of split name -> rows",
                    file=str(path), value=type(data).__name__)


def _rows_of(items: list, file: str, prefix: str) -> Split:
    for i, row in enumerate(items):
        if not isinstance(row, dict):
            raise DataError("each row must be a JSON object", file=file, field=f"{prefix}[{i}]", value=row)
    return Split(list(items), file, [f"{prefix}[{i}]" for i in range(len(items))])


def _read_csv(path: Path, *, delimiter: str) -> Split:
    rows, where = [], []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            raise DataError("CSV file is empty (no header line)", file=str(path)) from None
        except csv.Error as exc:
            raise DataError(f"malformed CSV: {exc}", file=str(path), field="line 1") from None
        if len(set(header)) != len(header):
            raise DataError("CSV header repeats a column name", file=str(path), field="line 1", value=header)
        while True:
            start = reader.line_num + 1
            try:
                rec = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise DataError(f"malformed CSV: {exc}", file=str(path), field=f"line {start}") from None
            if not rec:
                continue
            if len(rec) != len(header):
                raise DataError(f"row has {len(rec)} fields but the header has {len(header)}", file=str(path),
                                field=f"line {start} column {min(len(rec), len(header)) + 1}", value=rec)
            rows.append(dict(zip(header, rec)))
            where.append(f"line {start}")
    return Split(rows, str(path), where)


def _read_parquet(path: Path) -> Split:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - depends on the install
        raise DataError("reading Parquet needs pyarrow (pip install 'promptweave[data]')", file=str(path)) from None
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise DataError(f"unreadable Parquet file: {exc}", file=str(path)) from None
    return Split(rows, str(path), [f"row {i}" for i in range(len(rows))])


def read_split_dir(path: Path) -> dict[str, Split] | None:
    """A folder holding one file per split (``train.jsonl``, ``test.csv``...), or None if it holds none."""
    found: dict[str, Split] = {}
    for child in sorted(path.iterdir()):
        fmt = FILE_FORMATS.get(child.suffix.lower())
        if fmt is None or not child.is_file():
            continue
        if child.stem in found:
            raise DataError(f"two files for split {child.stem!r}", file=str(child))
        got = read_file(child, fmt=fmt)
        if isinstance(got, dict):
            raise DataError("a per-split file must hold a plain list of rows", file=str(child))
        found[child.stem] = got
    return found or None


def is_hf_saved(path: Path) -> bool:
    return path.is_dir() and any((path / n).is_file() for n in ("dataset_dict.json", "state.json",
                                                                   "dataset_info.json"))


def read_hf_disk(path: Path) -> Split | dict[str, Split]:
    """A dataset written by ``datasets``' ``save_to_disk``."""
    datasets = _datasets(str(path))
    try:
        ds = datasets.load_from_disk(str(path))
    except Exception as exc:
        raise DataError(f"cannot load the saved dataset: {exc}", file=str(path)) from None
    return _from_hf(ds, str(path))


def read_hf_named(name: str, *, subset: str | None = None, data_files: Any = None,
                  cache_dir: str | None = None) -> Split | dict[str, Split]:
    """A dataset loaded by name from the local Hugging Face cache (never the network), or a
    packaged builder (``json``, ``csv``, ``parquet``) over local ``data_files``."""
    datasets = _datasets(name)
    # Offline: the hub is never contacted; a dataset not in the cache is an error, not a download.
    old = (datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE)
    datasets.config.HF_HUB_OFFLINE = datasets.config.HF_DATASETS_OFFLINE = True
    env_old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        kw: dict[str, Any] = {}
        if subset is not None:
            kw["name"] = subset
        if data_files is not None:
            kw["data_files"] = data_files
        if cache_dir is not None:
            kw["cache_dir"] = cache_dir
        ds = datasets.load_dataset(name, **kw)
    except Exception as exc:
        raise DataError(f"cannot load dataset {name!r} offline from the local cache: {exc}", file=name,
                        expected="a local file or folder, or a dataset already in the Hugging Face cache") from None
    finally:
        datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE = old
        if env_old is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = env_old
    return _from_hf(ds, name)


def _datasets(where: str):
    try:
        import datasets
    except ImportError:  # pragma: no cover - depends on the install
        raise DataError("loading a Hugging Face dataset needs `datasets` (pip install 'promptweave[data]')",
                        file=where) from None
    return datasets


def _from_hf(ds: Any, file: str) -> Split | dict[str, Split]:
    if isinstance(ds, Mapping):  # DatasetDict is a dict of split name -> Dataset
        return {name: _from_hf(part, f"{file}[{name}]") for name, part in ds.items()}
    rows = ds.to_list()
    return Split(rows, file, [f"row {i}" for i in range(len(rows))])
