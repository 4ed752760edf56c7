"""For property tests whose input may be refused: the call's value, or the error it raised, to assert on outside
an ``except`` (so an assert cannot be skipped by the exception it inspects)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from promptweave.errors import PromptweaveError


def value_or_error(fn: Callable[..., Any], *args: Any, expected: type[BaseException] | tuple = PromptweaveError,
                   **kwargs: Any) -> tuple[Any, BaseException | None]:
    """``(fn(...), None)``, or ``(None, exc)`` when ``fn`` raised one of ``expected``; anything else propagates."""
    try:
        return fn(*args, **kwargs), None
    except expected as exc:
        return None, exc
