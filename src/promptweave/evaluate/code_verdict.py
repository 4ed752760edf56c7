"""The judge's side of a code run: what the sandboxed process reports is data, and the verdict is decided here.

The sandboxed process (``code_harness``) runs the model's program and then the test's steps. For each *probe* (an
assertion split by :mod:`promptweave.evaluate.code_plan`: ``assert f(x) == <literal>``), it writes only the value
the program produced, encoded as tagged JSON; the expected value never enters the sandbox, and the comparison is made
here, in this process, which the program cannot reach. A program that writes records of its own can only claim
values, which is what returning those values would have done. Records are one JSON object per line:

- ``{"v": <encoded value>}``: the value of the next probe;
- ``{"x": "assert" | "error"}``: a step raised (an ``AssertionError``, or anything else), and the run ended;
- ``{"done": 1}``: every step ran.

:class:`Verdict` reads them in order and decides: ``wrong_answer`` at the first probe whose value differs, ``pass``
only at ``done`` after every probe matched, ``failed`` for anything malformed or missing. Steps that could not be
split (an assertion inside a loop, a tolerance) ran inside the program's process, as the reference harnesses run
them; for those the process's own ``x``/``done`` is the verdict.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 200  # nesting of one encoded value (the harness encodes deeper values as opaque)


class BadRecord(ValueError):
    """A record that the harness would never write (only the program under test can have written it)."""


class Opaque:
    """A value the harness could not encode (an object of the program's own class, a numpy array ...): equal to no
    expected value, and not ``None``, ``True`` or ``False``."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<opaque {self.type_name}>"


def _floats(x: Any) -> float:
    if not isinstance(x, str) or len(x) > 64:
        raise BadRecord("a float is encoded as its hex string")
    try:
        return float.fromhex(x)
    except (ValueError, OverflowError):
        raise BadRecord("not a float hex string") from None


def _items(x: Any, depth: int) -> list[Any]:
    if not isinstance(x, list):
        raise BadRecord("a container's items are a list")
    return [decode(i, depth + 1) for i in x]


def decode(obj: Any, depth: int = 0) -> Any:
    """A value from its tagged JSON form (raises :class:`BadRecord` on any shape the harness does not write)."""
    if depth > MAX_DEPTH:
        raise BadRecord("nested too deep")
    if obj is None or isinstance(obj, bool):
        return obj
    if not isinstance(obj, dict) or len(obj) != 1:
        raise BadRecord("a value is null, a boolean or a one-key object")
    (tag, x), = obj.items()
    try:
        if tag == "i":
            if not isinstance(x, str) or len(x) > 1 << 20:
                raise BadRecord("an int is a hex string")
            return int(x, 16)
        if tag == "f":
            return _floats(x)
        if tag == "c":
            if not isinstance(x, list) or len(x) != 2:
                raise BadRecord("a complex is two floats")
            return complex(_floats(x[0]), _floats(x[1]))
        if tag == "s":
            if not isinstance(x, str):
                raise BadRecord("a str is a JSON string")
            return x
        if tag == "b":
            if not isinstance(x, str):
                raise BadRecord("bytes are a hex string")
            return bytes.fromhex(x)
        if tag == "l":
            return _items(x, depth)
        if tag == "t":
            return tuple(_items(x, depth))
        if tag == "set":
            return set(_items(x, depth))
        if tag == "fs":
            return frozenset(_items(x, depth))
        if tag == "d":
            if not isinstance(x, list) or not all(isinstance(p, list) and len(p) == 2 for p in x):
                raise BadRecord("a dict is a list of pairs")
            return {decode(k, depth + 1): decode(v, depth + 1) for k, v in x}
        if tag == "o":
            return Opaque(x if isinstance(x, str) else "?")
    except (TypeError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        if isinstance(exc, BadRecord):
            raise
        raise BadRecord(f"not a value ({type(exc).__name__})") from None
    raise BadRecord(f"unknown tag {tag!r}")


def type_aware_equal(a: Any, b: Any) -> bool:
    """``a == b`` that also needs the same types, all the way down (``1 != 1.0``, ``(1,) != [1]``), so an object
    with a forged ``__eq__`` never equals a plain value."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(type_aware_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        left = list(b.items())
        for k, v in a.items():
            for i, (k2, v2) in enumerate(left):
                if type_aware_equal(k, k2) and type_aware_equal(v, v2):
                    del left[i]
                    break
            else:
                return False
        return True
    if isinstance(a, (set, frozenset)):
        if len(a) != len(b):
            return False
        rest = list(b)
        for x in a:
            for i, y in enumerate(rest):
                if type_aware_equal(x, y):
                    del rest[i]
                    break
            else:
                return False
        return True
    try:
        r = a == b
    except Exception:
        return False
    return type(r) is bool and r


@dataclass(frozen=True)
class Expect:
    """What one probe's value must be: ``how`` is ``eq`` (``==``, or type-aware when ``typed``), ``is``/``is_not``
    (``value`` is ``None``, ``True`` or ``False``), ``truth`` (the harness sends ``bool(x)``), or ``left`` then
    ``right``: two values that must be equal to each other (an assertion whose both sides the sandbox computes)."""

    value: Any
    how: str = "eq"
    typed: bool = False

    def holds(self, got: Any) -> bool:
        if self.how == "is":
            return got is self.value
        if self.how == "is_not":
            return got is not self.value
        if self.how == "truth":
            return type(got) is bool and got is self.value
        if self.typed:
            return type_aware_equal(got, self.value)
        if isinstance(got, Opaque):
            return False
        try:
            r = got == self.value
        except RecursionError:
            return False
        return r is True


class Verdict:
    """Reads the harness's records in order (``feed``) and decides; ``result`` is ``None`` until decided."""

    def __init__(self, expects: Sequence[Expect]) -> None:
        self.expects = list(expects)
        self.matched = 0
        self.result: str | None = None
        self._left: Any = None

    def feed(self, line: bytes) -> str | None:
        if self.result is not None:
            return self.result
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            return None  # not a record: stray bytes written to the report fd
        if not isinstance(rec, dict) or len(rec) != 1:
            return None
        (key, val), = rec.items()
        if key == "v":
            if self.matched >= len(self.expects):
                self.result = "failed"  # more values than probes: not the harness
                return self.result
            try:
                got = decode(val)
            except BadRecord:
                self.result = "failed"
                return self.result
            expect = self.expects[self.matched]
            if expect.how == "left":
                self._left = got
            elif expect.how == "right":
                if not type_aware_equal(self._left, got):
                    self.result = "wrong_answer"
                    return self.result
            elif not expect.holds(got):
                self.result = "wrong_answer"
                return self.result
            self.matched += 1
        elif key == "x":
            self.result = "wrong_answer" if val == "assert" else "failed"
        elif key == "done":
            self.result = "pass" if self.matched == len(self.expects) else "failed"
        return self.result


__all__ = ["BadRecord", "Expect", "MAX_DEPTH", "Opaque", "Verdict", "decode", "type_aware_equal"]
