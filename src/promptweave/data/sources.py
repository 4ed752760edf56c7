"""Read rows from local files and Hugging Face ``datasets``, remembering where each row came from."""
from __future__ import annotations

import csv
import json
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.data.hub_cache import find_snapshot
from promptweave.data.roots import check_read
from promptweave.errors import DataError

FILE_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
                ".parquet": "parquet"}
HF_BUILDERS = {"json", "csv", "parquet", "text", "arrow"}

# Data files may hold fields far larger than csv's 128 KiB default (whole documents, long contexts).
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def check_regular(path: Path | str, *, field: str | None = None) -> Path:
    """Refuse at once anything but a regular file (``/dev/zero``, a FIFO, a folder): reading one would hang,
    never end or fail deep inside a parser. ``stat`` never opens the path, so a FIFO cannot block here."""
    p = Path(path)
    check_read(p, field=field, value=str(path))  # safe mode: data roots first (data/roots.py)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise DataError("data file not found", file=str(p), field=field) from None
    except OSError as exc:
        raise DataError(f"cannot read the data file: {exc.strerror}", file=str(p), field=field) from None
    except ValueError as exc:  # an embedded NUL
        raise DataError(f"not a usable file path ({exc})", file=repr(str(p)), field=field) from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise DataError(f"is {kind}, not a data file", file=str(p), field=field,
                        expected="a regular JSONL / JSON / CSV / Parquet file")
    return p


def read_text(path: Path | str, *, errors: str = "strict") -> str:
    """A whole text file, UTF-8 with or without a byte-order mark; bad bytes are a typed error naming the line."""
    p = check_regular(path)
    data = p.read_bytes()
    try:
        return data.decode("utf-8-sig", errors=errors)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise DataError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})", file=str(p),
                        field=f"line {line}") from None


def text_lines(path: Path | str, *, errors: str = "strict") -> list[str]:
    """Lines of a text file as Python's text-mode ``readlines`` splits them (``\\n``, ``\\r\\n`` or ``\\r``),
    without their ends; unlike ``str.splitlines``, U+2028 and friends stay inside a line."""
    text = read_text(path, errors=errors).replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


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
    check_regular(path)
    fmt = fmt or FILE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise DataError(f"unknown data file type {path.suffix!r}", file=str(path),
                        expected="one of " + ", ".join(sorted(FILE_FORMATS)))
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "json":
        return _read_json(path)
    if fmt in ("csv", "tsv"):
        return _read_csv(path, delimiter="\t" if fmt == "tsv" else ",")
    return read_parquet(path)


def _read_jsonl(path: Path) -> Split:
    try:
        return _read_jsonl_lines(path)
    except UnicodeDecodeError as exc:  # bytes that are not UTF-8 are a typed error
        raise DataError(f"the file is not UTF-8 text ({exc.reason} at a byte {exc.object[exc.start:exc.start + 4]!r})",
                        file=str(path), expected="UTF-8 JSON lines") from None


def _read_jsonl_lines(path: Path) -> Split:
    rows, where = [], []
    for lineno, line in enumerate(_jsonl_lines(path), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"malformed JSON: {exc.msg}", file=str(path),
                            field=f"line {lineno} column {exc.colno}") from None
        except RecursionError:
            raise DataError("JSON nested too deeply", file=str(path), field=f"line {lineno}") from None
        if not isinstance(row, dict):
            raise DataError("each line must be a JSON object", file=str(path), field=f"line {lineno}",
                            value=row)
        rows.append(row)
        where.append(f"line {lineno}")
    return Split(rows, str(path), where)


def _jsonl_lines(path: Path) -> list[str]:
    # Only "\n" ends a JSONL record: str.splitlines would also split on U+2028 and friends, which JSON allows
    # raw inside strings.
    return read_text(path).split("\n")


def _read_json(path: Path) -> Split | dict[str, Split]:
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON: {exc.msg}", file=str(path),
                        field=f"line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise DataError("JSON nested too deeply", file=str(path)) from None
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
    import io

    rows, where = [], []
    with io.StringIO(read_text(path), newline="") as fh:
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


def read_parquet(path: Path) -> Split:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # depends on the install: the real cause, typed, never swallowed by a fallback
        raise missing_extra("reading Parquet", ("pyarrow",), str(path)) from None
    check_regular(path)
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise DataError(f"unreadable Parquet file: {exc}", file=str(path)) from None
    return Split(rows, str(path), [f"row {i}" for i in range(len(rows))])


def read_split_dir(path: Path) -> dict[str, Split] | None:
    """A folder holding one file per split (``train.jsonl``, ``test.csv``...), or None if it holds none."""
    check_read(path, value=str(path))
    found: dict[str, Split] = {}
    for child in sorted(path.iterdir()):
        fmt = FILE_FORMATS.get(child.suffix.lower())
        if fmt is None or child.is_dir():
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
    check_read(path, value=str(path))
    datasets = _datasets(str(path))
    try:
        ds = datasets.load_from_disk(str(path))
    except Exception as exc:  # noqa: BLE001 - datasets raises many types for a bad folder
        raise DataError(f"cannot load the saved dataset: {exc}", file=str(path)) from None
    return from_hf(ds, str(path))


def read_hf_named(name: str, *, subset: str | None = None, data_files: Any = None,
                  cache_dir: str | None = None, revision: str | None = None) -> Split | dict[str, Split]:
    """A dataset loaded by name from the local Hugging Face cache (never the network), or a
    packaged builder (``json``, ``csv``, ``parquet``) over local ``data_files``.

    A hub id with a snapshot in the hub cache (``data fetch`` puts it there; ``revision`` picks one) is read from
    that snapshot folder: ``datasets`` offline does not look up a hub id in the hub cache by itself."""
    _check_hf_paths(name, data_files, cache_dir)
    source = name
    if name not in HF_BUILDERS and data_files is None and not _is_local(name):
        snap = find_snapshot(name, revision)
        if snap is not None:
            check_read(snap, field="path", value=name)
            source = str(snap)
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
        bars = datasets.is_progress_bar_enabled()
        datasets.disable_progress_bars()  # a run shows its own progress; datasets' bars would interleave
        try:
            ds = datasets.load_dataset(source, **kw)
        finally:
            if bars:
                datasets.enable_progress_bars()
    except Exception as exc:  # noqa: BLE001 - datasets raises many types for a missing dataset
        raise DataError(f"cannot load dataset {name!r} offline from the local cache: {exc}", file=name,
                        expected="a local file or folder, or a dataset already in the Hugging Face cache "
                                 "(`promptweave data fetch CONFIG` puts a hub dataset there)") from None
    finally:
        datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE = old
        if env_old is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = env_old
    return from_hf(ds, name)


def _check_hf_paths(name: str, data_files: Any, cache_dir: str | None) -> None:
    """``datasets`` reads a name that is a local folder, every data file and its cache folder itself: each is
    checked against the data roots first (a no-op outside a safe-mode dataset load)."""
    if _is_local(name):
        check_read(name, value=name)
    stack: list[tuple[str, Any]] = [("data_files", data_files)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, (str, os.PathLike)):
            check_read(item, field=where, value=str(item))
        elif isinstance(item, Mapping):
            stack.extend((f"{where}.{k}", v) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(item))
    if cache_dir is not None:
        check_read(str(cache_dir), field="cache_dir", value=cache_dir)


def _is_local(name: str) -> bool:
    try:
        return os.path.exists(os.path.expanduser(name))
    except (OSError, ValueError, RuntimeError):
        return False


def _datasets(where: str):
    try:
        import datasets
    except ImportError:  # depends on the install: the real cause, typed, never swallowed by a fallback
        raise missing_extra("loading a Hugging Face dataset", ("datasets",), where) from None
    return datasets


def missing_extra(what: str, modules: tuple[str, ...], file: str) -> Exception:
    """The typed error for data that needs an optional package (``promptweave[data]``)."""
    from promptweave.errors import MissingExtraError
    from promptweave.extras import describe, extra_for

    needs, fix = describe([(m, extra_for(m)) for m in modules])
    return MissingExtraError(f"{what} needs {needs}", file=file, field="path", expected=fix)


def from_hf(ds: Any, file: str) -> Split | dict[str, Split]:
    if isinstance(ds, Mapping):  # DatasetDict is a dict of split name -> Dataset
        return {name: from_hf(part, f"{file}[{name}]") for name, part in ds.items()}
    rows = ds.to_list()
    return Split(rows, file, [f"row {i}" for i in range(len(rows))])
