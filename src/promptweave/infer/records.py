"""The shape of a prompt record the inferencers consume (the engine's ``PromptRecord``)."""
from __future__ import annotations

from dataclasses import dataclass, field
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


class RecordChunk(list):
    """A list of records that also holds what each one renders, as one list: ``prompts[i]`` is
    ``self[i].rendered``. Compiled plans hand over the list their records point into (no pass per
    record); otherwise it is gathered once, on first use. Read-only, as the records are."""

    __slots__ = ("_prompts",)

    def __init__(self, records: Iterable[Any] = (), prompts: list | None = None) -> None:
        super().__init__(records)
        self._prompts = prompts

    @property
    def prompts(self) -> list:
        if self._prompts is None:
            self._prompts = [r.rendered for r in self]
        return self._prompts


def prompts_of(records: Sequence[Any]) -> list:
    """What each record renders, as a list: a :class:`RecordChunk`'s own list, or gathered."""
    return records.prompts if isinstance(records, RecordChunk) else [r.rendered for r in records]


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
