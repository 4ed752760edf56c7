"""Optional packages an evaluator needs: noted when the config is linted, refused when a run is planned.

An evaluator lists ``requires = ((module, extra), ...)``, or says itself what is missing through
``unavailable() -> (what, how to fix) | None``. Building it without the module only warns (``lint`` accepts the
config form and shows the note); ``run`` / ``run --dry-run`` refuse it before any model call, naming the package
and the ``promptweave[extra]`` that installs it.
"""
from __future__ import annotations

import importlib.util
import warnings
from typing import Any

from promptweave.errors import MissingExtraError, PromptweaveWarning


def missing(evaluator: Any) -> list[tuple[str, str]]:
    """The ``(module, extra)`` pairs of the evaluator's ``requires`` that cannot be imported."""
    out = []
    for module, extra in getattr(evaluator, "requires", ()):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append((module, extra))
    return out


def _problem(evaluator: Any) -> tuple[str, str] | None:
    own = getattr(evaluator, "unavailable", None)
    if callable(own):
        found = own()
        if found:
            return found
    gaps = missing(evaluator)
    if not gaps:
        return None
    name = getattr(evaluator, "name", type(evaluator).__name__)
    pkgs = ", ".join(repr(m) for m, _ in gaps)
    extras = ",".join(sorted({e for _, e in gaps}))
    return f"{name} needs the {pkgs} package", f"pip install 'promptweave[{extras}]'"


def note_missing(evaluator: Any) -> None:
    """Warn (for ``lint``) when a required package is absent."""
    found = _problem(evaluator)
    if found:
        msg, fix = found
        warnings.warn(PromptweaveWarning(f"{msg}; run refuses it (fix: {fix})"), stacklevel=3)


def require(evaluator: Any, where: str) -> None:
    """Raise :class:`MissingExtraError` when a required package is absent (plan time of a run)."""
    found = _problem(evaluator)
    if found:
        msg, fix = found
        raise MissingExtraError(msg, field=f"{where}.evaluator.type", value=getattr(evaluator, "name", None),
                                expected=fix)
