"""Python-format placeholders in LVE prompts, filled without ``str.format`` on the template.

LVE fills messages with ``content.format_map(param_values)``. We keep its surface
syntax (``{{`` / ``}}`` literal braces, ``{x:>5}``, ``{x!r}``, nested ``{x:{w}}``)
but parse the template once with :meth:`string.Formatter.parse` and format each
value on its own, so

- attribute and index access (``{x.__class__}``, ``{x[0]}``) is refused: a test
  file must not reach into Python objects;
- a value is inserted once and never re-read as template syntax;
- every fault names the placeholder and where it is.
"""
from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

from promptweave.lve.errors import LVEFillError, LVELoadError

_FORMATTER = string.Formatter()


class TemplateSyntaxError(LVELoadError):
    """A placeholder in a prompt or checker argument cannot be used (load-time fault)."""

    code = "PW511"


class MissingValueError(LVEFillError):
    """A placeholder has no value, or its value does not fit its format spec (fill-time fault)."""

    code = "PW521"


@dataclass(frozen=True)
class Field:
    """One ``{name!conv:spec}`` replacement field."""

    name: str
    conversion: str | None
    spec: tuple[Piece, ...]


Piece = Union[str, Field]


@dataclass(frozen=True)
class Template:
    """A parsed template: literal text and fields, in order."""

    source: str
    pieces: tuple[Piece, ...]

    @property
    def names(self) -> list[str]:
        """Every field name used, spec fields included, in first-use order."""
        seen: list[str] = []

        def walk(pieces: tuple[Piece, ...]) -> None:
            for p in pieces:
                if isinstance(p, Field):
                    if p.name not in seen:
                        seen.append(p.name)
                    walk(p.spec)

        walk(self.pieces)
        return seen

    @property
    def is_literal(self) -> bool:
        return not any(isinstance(p, Field) for p in self.pieces)

    def as_written(self) -> str:
        """The text with ``{{``/``}}`` escapes resolved and every placeholder kept as written (not filled)."""
        return _as_written(self.pieces)

    def fill(self, values: Mapping[str, Any], *, file: str | None = None, field: str | None = None) -> str:
        return "".join(text for text, _ in self.fill_segments(values, file=file, field=field))

    def fill_segments(self, values: Mapping[str, Any], *, file: str | None = None,
                      field: str | None = None) -> list[tuple[str, bool]]:
        """Fill, keeping which text came from the template (True) and which from values (False)."""
        merged: list[tuple[str, bool]] = []
        for seg, is_lit in _fill(self.pieces, values, file, field):
            if merged and is_lit and merged[-1][1]:
                merged[-1] = (merged[-1][0] + seg, True)
            else:
                merged.append((seg, is_lit))
        return merged


def _as_written(pieces: tuple[Piece, ...]) -> str:
    out: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append(piece)
            continue
        conv = f"!{piece.conversion}" if piece.conversion else ""
        spec = f":{_as_written(piece.spec)}" if piece.spec else ""
        out.append("{" + piece.name + conv + spec + "}")
    return "".join(out)


def _fill(pieces: tuple[Piece, ...], values: Mapping[str, Any], file: str | None,
          field: str | None) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    for piece in pieces:
        if isinstance(piece, str):
            out.append((piece, True))
            continue
        if piece.name not in values:
            raise MissingValueError(
                f"placeholder {{{piece.name}}} has no value in the instance args",
                file=file, field=field, expected=f"an argument named '{piece.name}'")
        value = values[piece.name]
        if piece.conversion == "r":
            value = repr(value)
        elif piece.conversion == "s":
            value = str(value)
        elif piece.conversion == "a":
            value = ascii(value)
        spec = "".join(text for text, _ in _fill(piece.spec, values, file, field))
        try:
            text = format(value, spec)
        except (ValueError, TypeError) as exc:
            raise MissingValueError(
                f"value of {{{piece.name}}} does not fit format spec ':{spec}': {exc}",
                file=file, field=field, value=value) from None
        out.append((text, False))
    return out


def compile_template(source: str, *, file: str | None = None, field: str | None = None,
                     _depth: int = 0) -> Template:
    """Parse ``source``; raise :class:`TemplateSyntaxError` for anything ``format_map`` would reject
    and for attribute / index access, which we refuse."""
    try:
        parsed = list(_FORMATTER.parse(source))
    except ValueError as exc:
        hint = " (write a literal brace as '{{' or '}}')" if "'}'" in str(exc) or "'{'" in str(exc) else ""
        raise TemplateSyntaxError(f"bad placeholder syntax: {exc}{hint}", file=file, field=field,
                                  value=source) from None
    pieces: list[Piece] = []
    for literal, name, spec, conversion in parsed:
        if literal:
            pieces.append(literal)
        if name is None:
            continue
        if name == "" or name.isdigit():
            raise TemplateSyntaxError(
                "positional placeholder ('{}' or '{0}') is not allowed; name the parameter, or write "
                "literal braces as '{{' and '}}'", file=file, field=field, value=source)
        if "." in name or "[" in name:
            raise TemplateSyntaxError(
                f"placeholder {{{name}}} uses attribute or index access, which is refused: a test file "
                "must not reach into Python objects", file=file, field=field, value=name)
        if conversion not in (None, "r", "s", "a"):
            raise TemplateSyntaxError(f"unknown conversion '!{conversion}' in placeholder {{{name}}}",
                                      file=file, field=field, value=source, expected="!r, !s or !a")
        spec_pieces: tuple[Piece, ...] = ()
        if spec:
            if _depth >= 1 and ("{" in spec or "}" in spec):
                raise TemplateSyntaxError("format spec nested too deeply", file=file, field=field, value=source)
            spec_pieces = compile_template(spec, file=file, field=field, _depth=_depth + 1).pieces
        pieces.append(Field(name, conversion, spec_pieces))
    return Template(source, tuple(pieces))


def fill_twice(template: Template, first: Mapping[str, Any], second: Mapping[str, Any], *,
               file: str | None = None, field: str | None = None) -> str:
    """LVE's ExactMatchChecker formats its pattern twice; we re-read only template text, never values."""
    out: list[str] = []
    for text, is_literal in template.fill_segments(first, file=file, field=field):
        if is_literal:
            out.append(compile_template(text, file=file, field=field).fill(second, file=file, field=field))
        else:
            out.append(text)
    return "".join(out)
