"""``reader_cfg``: which columns a prompt uses and which slice of each split is read."""
from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptweave.errors import DataError

Range = int | float | str | None

_SLICE = re.compile(r"^\s*\[\s*(-?\d+)?\s*:\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?\]\s*$")


@dataclass(frozen=True)
class ReaderConfig:
    """The reference's ``DatasetReader`` settings, validated."""

    input_columns: tuple[str, ...]
    output_column: str | None = None
    train_split: str = "train"
    test_split: str = "test"
    train_range: Range = None
    test_range: Range = None

    @property
    def columns(self) -> list[str]:
        """Input columns then the output column, each once: the columns a projected row keeps."""
        cols = list(dict.fromkeys(self.input_columns))
        if self.output_column is not None and self.output_column not in cols:
            cols.append(self.output_column)
        return cols

    @classmethod
    def from_dict(cls, cfg: Mapping[str, Any] | None, *, file: str | None = None) -> ReaderConfig:
        if not isinstance(cfg, Mapping):
            raise DataError("reader_cfg must be a dict", file=file, field="reader_cfg", value=cfg,
                            expected="dict(input_columns=[...], output_column=...)")
        if "input_columns" not in cfg:
            raise DataError("reader_cfg has no input_columns", file=file, field="reader_cfg.input_columns",
                            expected="a column name or a list of column names")
        cols = cfg["input_columns"]
        if isinstance(cols, str):
            cols = cols.split()  # the reference splits a string on whitespace
        if not isinstance(cols, (list, tuple)) or not all(isinstance(c, str) and c for c in cols):
            raise DataError("input_columns must be a list of column names", file=file,
                            field="reader_cfg.input_columns", value=cfg["input_columns"])
        out = cfg.get("output_column")
        if out is not None and not isinstance(out, str):
            raise DataError("output_column must be a column name", file=file, field="reader_cfg.output_column",
                            value=out)
        splits = {}
        for key, default in (("train_split", "train"), ("test_split", "test")):
            val = cfg.get(key, default)
            if not isinstance(val, str) or not val:
                raise DataError(f"{key} must be a split name", file=file, field=f"reader_cfg.{key}", value=val)
            splits[key] = val
        ranges = {}
        for key in ("train_range", "test_range"):
            val = cfg.get(key)
            check_range(val, file=file, field=f"reader_cfg.{key}")
            ranges[key] = val
        return cls(tuple(cols), out or None, splits["train_split"], splits["test_split"], **ranges)


def check_range(size: Range, *, file: str | None = None, field: str = "range") -> None:
    if size is None:
        return
    if isinstance(size, bool) or not isinstance(size, (int, float, str)):
        raise DataError("a range must be a slice string, an int or a float", file=file, field=field, value=size,
                        expected="e.g. '[0:100]', 100 or 0.5")
    if isinstance(size, str) and not _SLICE.match(size):
        raise DataError("a range string must be a slice such as '[0:100]'", file=file, field=field, value=size,
                        expected="'[start:stop]' or '[start:stop:step]' with integer bounds")
    if isinstance(size, float) and size >= 1 and not size.is_integer():
        raise DataError("a float range of 1 or more must be a whole number", file=file, field=field, value=size)


def select_range(n: int, size: Range, *, file: str | None = None, field: str = "range") -> list[int]:
    """Row indices the reference's ``load_partial_dataset`` keeps out of ``n`` rows.

    A slice string slices the index list (parsed, never evaluated); an int or
    float keeps a random subset shuffled by ``random.Random(size)``, exactly as
    the reference does, and is ignored when it is ``<= 0`` or ``>= n``.
    """
    check_range(size, file=file, field=field)
    index = list(range(n))
    if size is None:
        return index
    if isinstance(size, str):
        m = _SLICE.match(size)
        assert m is not None  # checked above
        start, stop, step = (int(g) if g is not None else None for g in m.groups())
        if step == 0:
            raise DataError("a range step cannot be zero", file=file, field=field, value=size)
        return index[start:stop:step]
    if size >= n or size <= 0:
        return index
    if 0 < size < 1:
        size = int(size * n)
    size = int(size)
    rand = random.Random(size)
    rand.shuffle(index)
    return index[:size]


def project(row: Mapping[str, Any], columns: Sequence[str]) -> dict[str, Any]:
    return {c: row[c] for c in columns}
