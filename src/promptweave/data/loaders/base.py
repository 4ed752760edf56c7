"""What every native loader gets: where the config is, how to find its data and how to read it with row locations."""
from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptweave.data.locate import Located, locate
from promptweave.data.sources import Split, check_regular, read_text
from promptweave.errors import DataError, DataNotFoundError, LoaderError

Splits = Split | dict[str, Split]
LoaderFn = Callable[..., Splits]


@dataclass(frozen=True)
class LoadContext:
    """The dataset being loaded: its abbr, class name, config file and folder (for messages and path rules)."""

    loader: str
    abbr: str | None = None
    file: str | None = None
    base_dir: Path | None = None

    def find(self, path: Any, *, local_mode: bool = False, field: str = "path") -> Path:
        """A reference path or data id resolved the way the reference's ``get_data_path`` does."""
        return self.locate(path, local_mode=local_mode, field=field).path

    def files(self, path: Any, names: Sequence[str], *, local_mode: bool = False, field: str = "path") -> list[Path]:
        """The files a loader reads (``names``, e.g. ``"dev/x_dev.csv"``) inside the folder ``find`` resolves: a
        folder not found, or one lacking some of them, is one error that names them all."""
        return self.members(self.locate(path, local_mode=local_mode, field=field, files=names).path, *names)

    def locate(self, path: Any, *, local_mode: bool = False, field: str = "path",
               files: Sequence[str] = ()) -> Located:
        if not isinstance(path, str) or not path:
            raise LoaderError(f"{self.loader} needs {field} to be a path or dataset id", file=self.file,
                              field=field, value=path)
        try:
            return locate(path, base_dir=self.base_dir, local_mode=local_mode, abbr=self.abbr, file=self.file,
                          field=field, loader=self.loader)
        except DataNotFoundError as exc:
            if not files:
                raise
            raise DataNotFoundError(f"{exc.message}; {self.loader} reads {_listed(files)} inside that folder",
                                    file=exc.file, field=exc.field, expected=exc.expected) from None

    def concat(self, path: Any, filename: Any) -> Path:
        """``get_data_path(path) + filename`` by plain string concatenation, as some reference loaders join them
        (a trailing ``/`` on the id's local path is kept, so ``./data/x/`` + ``f.json`` is ``x/f.json``)."""
        if not isinstance(filename, str):
            raise LoaderError(f"{self.loader} needs filename to be a string", file=self.file, field="filename",
                              value=filename)
        from promptweave.compat.data_ids import DATA_IDS

        found = str(self.find(path))
        if str(DATA_IDS.get(path, path)).endswith("/"):
            found += "/"
        f = Path(found + filename)
        if not _exists(f):
            raise LoaderError(f"{self.loader}: {f} not found (path + filename)", file=str(f), field="filename",
                              expected="the reference's dataset files, as unpacked")
        return f

    def member(self, root: Path, *parts: str) -> Path:
        """A file inside a located dataset folder; a missing one is a layout error naming the expected file."""
        for part in parts:
            _usable(self, part)
        return self._present(root, {"/".join(parts): root.joinpath(*parts)})[0]

    def members(self, root: Path, *names: str) -> list[Path]:
        """The files ``names`` (``"dev/x.csv"``) inside a located dataset folder; when some are missing, one
        layout error names every one of them."""
        for name in names:
            _usable(self, name)
        return self._present(root, {name: root / name for name in names})

    def _present(self, root: Path, files: dict[str, Path]) -> list[Path]:
        missing = [name for name, p in files.items() if not _exists(p)]
        if missing:
            who = f"dataset {self.abbr!r}: " if self.abbr else ""
            gone = "it is missing" if len(files) == 1 else f"missing: {_listed(missing)}"
            raise LoaderError(f"{who}{self.loader} expects {_listed(list(files))} inside {root} (its on-disk "
                              "layout); " + gone + (f" (config {self.file})" if self.file else ""),
                              file=str(files[missing[0]] if len(missing) == 1 else root), field="path",
                              expected="the reference's dataset files, as unpacked")
        return list(files.values())

    def fail(self, message: str, *, file: Path | str | None = None, where: str | None = None,
             value: Any = None) -> LoaderError:
        kw: dict[str, Any] = {} if value is None else {"value": value}
        return LoaderError(f"{self.loader}: {message}", file=str(file) if file else self.file, field=where, **kw)


def _usable(ctx: LoadContext, part: Any) -> None:
    if not isinstance(part, str) or not part or "\x00" in part:
        raise LoaderError(f"{ctx.loader}: not a usable file name", file=ctx.file, value=part)


def _listed(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _exists(p: Path) -> bool:
    try:
        return p.exists()
    except (OSError, ValueError):
        return False


def jsonl(path: Path, *, errors: str = "strict") -> list[tuple[str, Any]]:
    """(location, value) per non-empty line, any JSON value (loaders check the shape they need)."""
    out = []
    for lineno, line in enumerate(read_text(path, errors=errors).split("\n"), 1):
        if not line.strip():
            continue
        try:
            out.append((f"line {lineno}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise DataError(f"malformed JSON: {exc.msg}", file=str(path),
                            field=f"line {lineno} column {exc.colno}") from None
        except RecursionError:
            raise DataError("JSON nested too deeply", file=str(path), field=f"line {lineno}") from None
    return out


def json_file(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON: {exc.msg}", file=str(path),
                        field=f"line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise DataError("JSON nested too deeply", file=str(path)) from None


def csv_records(path: Path, *, delimiter: str = ",") -> list[tuple[str, list[str]]]:
    """(location, fields) per CSV record, header included (the reference loaders index columns by position)."""
    out = []
    reader = csv.reader(io.StringIO(read_text(path), newline=""), delimiter=delimiter)
    while True:
        start = reader.line_num + 1
        try:
            rec = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise DataError(f"malformed CSV: {exc}", file=str(path), field=f"line {start}") from None
        if rec:
            out.append((f"line {start}", rec))
    return out


def python_literal(text: str, *, file: Path, where: str) -> Any:
    """A Python literal stored as text in a data file (the reference ``eval``s these; we only parse literals)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise DataError("expected a Python literal (list / string)", file=str(file), field=where,
                        value=text[:80]) from None


def rows(items: Iterable[tuple[str, dict[str, Any]]], file: Path | str) -> Split:
    where, out = [], []
    for loc, row in items:
        where.append(loc)
        out.append(row)
    return Split(out, str(file), where)


def need(ctx: LoadContext, item: Any, keys: Iterable[str], *, file: Path, where: str) -> Mapping[str, Any]:
    """``item`` as a dict holding ``keys``; a layout error naming the first missing key otherwise."""
    if not isinstance(item, Mapping):
        raise ctx.fail("each record must be a JSON object", file=file, where=where, value=item)
    for k in keys:
        if k not in item:
            raise ctx.fail(f"record has no {k!r} field", file=file, where=where,
                           value=sorted(item)[:12])
    return item


def regular(path: Path) -> Path:
    return check_regular(path)
