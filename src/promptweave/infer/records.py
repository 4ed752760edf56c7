"""The shape of a prompt record the inferencers consume (the engine's ``PromptRecord``)."""
from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any, Hashable, Iterable, Protocol, Sequence, Union, runtime_checkable

Rendered = Union[str, Sequence[Any]]
"""A rendered prompt: a string, a list of segments (``str | list[int]``) or a list of chat messages."""


@runtime_checkable
class RecordLike(Protocol):
    """What inference needs from a record: row index, shots, label (PPL) and the rendered prompt."""

    index: int
    shot_ids: Sequence[Hashable]
    rendered: Rendered


@dataclass
class Record:
    """A plain record, for callers (and tests) that build prompts without the engine."""

    index: int
    rendered: Rendered
    shot_ids: list = field(default_factory=list)
    label: Any = None
    mode: str = "gen"
    row: dict = field(default_factory=dict)


class RecordChunk(Sequence):
    """A batch of prompt records, readable as columns without making the records.

    ``prompts`` is what each record renders, ``indices`` each record's row, ``labels`` its label (ppl) and
    ``shot_ids`` its in-context example ids, one entry per record, in order. A compiled plan makes a chunk
    from columns alone (:meth:`from_columns`): the inferencers read the columns, and the record objects are
    made, once and then kept, only when something reads the chunk as records (iterating it, indexing it).
    A chunk made from records gathers its columns from them. Read-only, as the records are.
    """

    __slots__ = ("_records", "_prompts", "_make", "_rows", "_per_row", "_labels", "_shots")

    def __init__(self, records: Iterable[Any] = (), prompts: list | None = None) -> None:
        self._records: list | None = records if type(records) is list else list(records)
        self._prompts = prompts
        self._make: Callable[[], Iterable[Any]] | None = None
        self._rows: Sequence[int] | None = None  # a chunk made from records reads its columns off them
        self._per_row, self._labels = 1, ()
        self._shots: tuple[Any, bool] = (None, False)

    @classmethod
    def from_columns(cls, make: Callable[[], Iterable[Any]], prompts: list, rows: Sequence[int],
                     labels: Sequence[Any], shots: Any, per_row_shots: bool = False) -> RecordChunk:
        """A chunk of ``len(rows) * len(labels)`` records (a row's labels together) known by its columns;
        ``make()`` gives the records themselves. ``shots`` is one id list for every row, or (with
        ``per_row_shots``) a list of them, one per row."""
        self = cls.__new__(cls)
        self._records, self._prompts, self._make = None, prompts, make
        self._rows, self._labels, self._shots = rows, tuple(labels), (shots, per_row_shots)
        self._per_row = len(self._labels)
        return self

    @property
    def columnar(self) -> bool:
        """True while the chunk has made no record object (so none carries ``extra`` notes)."""
        return self._records is None

    def records(self) -> list:
        """The records, made on first use (the collector paused meanwhile: they are new, acyclic and kept)."""
        if self._records is None:
            paused = gc.isenabled()
            if paused:
                gc.disable()
            try:
                self._records = list(self._make()) if self._make is not None else []
            finally:
                if paused:
                    gc.enable()
            self._make = None
        return self._records

    @property
    def prompts(self) -> list:
        if self._prompts is None:
            self._prompts = [r.rendered for r in self.records()]
        return self._prompts

    @property
    def indices(self) -> Sequence[int]:
        if self._rows is None:
            return [r.index for r in self.records()]
        if self._per_row == 1:
            return self._rows
        return list(chain.from_iterable(map(repeat, self._rows, repeat(self._per_row))))

    @property
    def labels(self) -> Sequence[Any]:
        if self._rows is None:
            return [getattr(r, "label", None) for r in self.records()]
        return list(self._labels) * len(self._rows)

    @property
    def shot_ids(self) -> Sequence[Any]:
        if self._rows is None:
            return [r.shot_ids for r in self.records()]
        shots, per_row = self._shots
        if not per_row:
            return [shots] * len(self.prompts)
        if self._per_row == 1:
            return shots
        return list(chain.from_iterable(map(repeat, shots, repeat(self._per_row))))

    def __len__(self) -> int:
        return len(self.prompts) if self._records is None else len(self._records)

    def __getitem__(self, i: Any) -> Any:
        return self.records()[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.records())

    def __repr__(self) -> str:
        return f"RecordChunk({len(self)} records)"


def prompts_of(records: Sequence[Any]) -> list:
    """What each record renders, as a list: a :class:`RecordChunk`'s own list, or gathered."""
    return records.prompts if isinstance(records, RecordChunk) else [r.rendered for r in records]


def columns_of(records: Sequence[Any]) -> tuple[Sequence[int], list, Sequence[Any]] | None:
    """``(indices, prompts, shot_ids)`` of a batch whose records were never made (a compiled chunk's), read
    without making them; None when the batch must be read as records (they may carry ``row`` or ``extra``)."""
    if isinstance(records, RecordChunk) and records.columnar:
        return records.indices, records.prompts, records.shot_ids
    return None


def is_messages(rendered: Any) -> bool:
    """True when ``rendered`` is a list of OpenAI-style chat messages."""
    return isinstance(rendered, (list, tuple)) and bool(rendered) and all(
        isinstance(m, dict) and "role" in m for m in rendered)


def to_jsonable(rendered: Any) -> Any:
    if isinstance(rendered, tuple):
        return [to_jsonable(x) for x in rendered]
    if isinstance(rendered, list):
        return [to_jsonable(x) for x in rendered]
    return rendered
