"""Template text compiled once: literal runs, ``{name}`` slots and an optional ice slot.

Filling is one pass over the compiled segments. Inserted values are never
scanned again, so a row value holding ``{answer}`` or ``</E>`` appears in the
prompt exactly as written (the references re-substitute such values).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True, slots=True)
class Slot:
    """A ``{name}`` placeholder: filled from the row's ``name`` column if the row has one."""

    name: str


class _IceSlot:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ICE"

    def __reduce__(self) -> str:
        # segments are tested with ``is ICE``: a pickled template (Ray's object store, a worker process) must
        # come back holding this very object, or its examples would silently drop out of every prompt
        return "ICE"


ICE = _IceSlot()
"""Where the in-context examples go (the template's ``ice_token``)."""

Segment = "str | Slot | _IceSlot"


def as_text(value: Any) -> str:
    """How a row value is written into a prompt (Python ``str()``, as the references do)."""
    return value if type(value) is str else str(value)


def _parse_placeholders(text: str, out: list) -> None:
    pos = 0
    for m in _PLACEHOLDER.finditer(text):
        if m.start() > pos:
            out.append(text[pos:m.start()])
        out.append(Slot(m.group(1)))
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])


@dataclass(frozen=True, slots=True)
class CompiledText:
    """A parsed template string. ``source`` is the raw text it came from."""

    source: str
    segments: tuple

    @classmethod
    def parse(
        cls,
        text: str,
        *,
        ice_token: str | None = None,
        strip_before_ice: Sequence[str] = (),
        strip_after_ice: Sequence[str] = (),
    ) -> "CompiledText":
        """Compile ``text``.

        ``strip_before_ice`` tokens are removed before the ice token is located,
        ``strip_after_ice`` from the pieces around it: this reproduces the order
        in which the references remove ``sep_token`` relative to inserting examples.
        """
        raw = text
        for tok in strip_before_ice:
            if tok:
                text = text.replace(tok, "")
        pieces = text.split(ice_token) if ice_token else [text]
        segments: list = []
        for i, piece in enumerate(pieces):
            for tok in strip_after_ice:
                if tok:
                    piece = piece.replace(tok, "")
            if i:
                segments.append(ICE)
            _parse_placeholders(piece, segments)
        return cls(raw, tuple(segments))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.segments if type(s) is Slot)

    @property
    def has_ice(self) -> bool:
        return any(s is ICE for s in self.segments)

    def fill(self, row: Mapping[str, Any], ice: str = "") -> str:
        """Fill slots from ``row`` (absent columns stay as ``{name}``) and the ice slot with ``ice``."""
        out = []
        for s in self.segments:
            t = type(s)
            if t is str:
                out.append(s)
            elif t is Slot:
                if s.name in row:
                    out.append(as_text(row[s.name]))
                else:
                    out.append("{" + s.name + "}")
            else:
                out.append(ice)
        return "".join(out)

    def split_on_ice(self) -> list["CompiledText"]:
        """The pieces between ice slots (used to splice dialogue examples into a string item)."""
        pieces: list[list] = [[]]
        for s in self.segments:
            if s is ICE:
                pieces.append([])
            else:
                pieces[-1].append(s)
        return [CompiledText(_unparse(p), tuple(p)) for p in pieces]


def _unparse(segments: Sequence) -> str:
    return "".join(s if type(s) is str else "{" + s.name + "}" for s in segments)
