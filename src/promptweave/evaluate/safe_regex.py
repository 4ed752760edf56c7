"""Patterns that come from configs run with a time limit (the ``regex`` engine's ``timeout=``).

A catastrophic-backtracking pattern such as ``(a+)+$`` in a postprocessor argument would otherwise hang scoring; here
it ends in :class:`RegexTimeoutError` naming the pattern. Built-in patterns written in this package stay on ``re``.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import regex

from promptweave.errors import EvaluationError, RegexTimeoutError

TIMEOUT_S = 1.0

_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE}


@lru_cache(maxsize=512)
def compile_pattern(pattern: str, flags: int = 0, *, where: str = "pattern") -> Any:
    try:
        # V0 keeps Python ``re`` semantics, which is what the references' configs were written for
        return regex.compile(pattern, flags | regex.V0)
    except (regex.error, TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise EvaluationError(f"invalid regular expression ({exc})", field=where, value=pattern,
                              expected="a Python regular expression") from None


def flags_from(spec: Any) -> int:
    if isinstance(spec, int):
        return spec
    out = 0
    for ch in str(spec or "").lower():
        out |= _FLAGS.get(ch, 0)
    return out


def _run(method: str, pattern: str, text: str, flags: int, where: str) -> Any:
    compiled = compile_pattern(pattern, flags, where=where)
    try:
        return getattr(compiled, method)(text, timeout=TIMEOUT_S)
    except TimeoutError:
        raise RegexTimeoutError(f"regular expression ran past {TIMEOUT_S:g}s (catastrophic backtracking?)",
                                field=where, value=pattern,
                                expected="a pattern without nested repetition such as (a+)+") from None


def search(pattern: str, text: str, flags: int = 0, *, where: str = "pattern") -> Any:
    return _run("search", pattern, text, flags, where)


def findall(pattern: str, text: str, flags: int = 0, *, where: str = "pattern") -> list:
    return _run("findall", pattern, text, flags, where)
