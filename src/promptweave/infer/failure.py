"""A request that failed on its own (refused, or out of retries): it fails its row, not the task."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ON_ROW_ERROR = ("wrong", "skip", "fail")
"""How failed rows are scored: ``wrong`` (counted as incorrect), ``skip`` (left out of the
metrics, still counted), ``fail`` (the task fails; its other rows are still written)."""


@dataclass(frozen=True)
class RowFailure:
    """Why one request has no answer: ``kind`` (``http_400``, ``timeout``, ``malformed``, ...),
    the error message and how many attempts were made. Never cached, so a rerun retries it."""

    kind: str
    message: str
    attempts: int = 1

    @classmethod
    def of(cls, exc: BaseException) -> RowFailure:
        return cls(str(getattr(exc, "kind", type(exc).__name__)), str(exc), int(getattr(exc, "attempts", 1)))

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "attempts": self.attempts}


def first_failure(values: Any) -> RowFailure | None:
    """The first :class:`RowFailure` among a row's answers, if any."""
    for v in values:
        if isinstance(v, RowFailure):
            return v
    return None
