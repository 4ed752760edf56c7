"""LVE errors, one class per stage at which a fault is seen."""
from __future__ import annotations

from promptweave.errors import LVEError


class LVELoadError(LVEError):
    """The test folder itself is invalid (seen at load time, before any instance)."""

    code = "PW510"
    stage = "load"


class LVEFillError(LVEError):
    """An instance's arguments do not fit the test (seen when filling, before any model call)."""

    code = "PW520"
    stage = "fill"


class LVECheckError(LVEError):
    """The checker failed while judging a response (after the model calls)."""

    code = "PW530"
    stage = "check"
