from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Unsupported(Exception):
    """Raised by a checker for a case it cannot handle yet (counted, never passed)."""


@dataclass
class Outcome:
    """The result of one case: ``got`` is what we produced, compared with ``expected``."""

    passed: bool
    got: Any = None
    expected: Any = None
    detail: str = ""
