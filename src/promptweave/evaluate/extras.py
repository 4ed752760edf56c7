"""Optional packages a task's scoring needs: noted when an evaluator is built, refused when a task is planned.

What each class needs is its ``requires`` attribute, and which extra installs it is ``promptweave.extras.EXTRAS``
(see there). An evaluator may also say itself what is missing through ``unavailable() -> (what, how to fix) |
None``. :func:`require_task` runs while planning (``lint``, ``run --dry-run`` and ``run`` alike), before any model
call, over the evaluator, its postprocessors and the dataset's retriever.
"""
from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable
from typing import Any

from promptweave.errors import MissingExtraError, PromptweaveWarning
from promptweave.extras import describe
from promptweave.extras import missing as _missing_of


def missing(evaluator: Any) -> list[tuple[str, str]]:
    """The ``(module, extra)`` pairs of the evaluator's ``requires`` that cannot be imported."""
    return _missing_of([evaluator])


def _problem(evaluator: Any, parts: Iterable[Any] = (), *, own_check: bool = True,
             rows: Any = ()) -> tuple[str, str] | None:
    own = getattr(evaluator, "unavailable", None) if own_check else None
    if callable(own):
        found = own()
        if found:
            return found
    gaps = _missing_of([evaluator, *parts], rows)
    if not gaps:
        return None
    name = getattr(evaluator, "name", type(evaluator).__name__)
    what, fix = describe(gaps)
    return f"{name} needs {what}", fix


def note_missing(evaluator: Any) -> None:
    """Warn when a required package is absent (the evaluator is built; planning refuses it)."""
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


def _unwrap(fn: Any) -> Any:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def require_task(evaluation: Any, *, task: str, file: str | None = None, retriever: Any = None) -> None:
    """Before any model call: one :class:`MissingExtraError` naming ``task`` ("dataset × model") when its
    evaluator, postprocessors or retriever need a package that is not installed."""
    if evaluation is None:
        return
    ev = evaluation.evaluator
    posts = [_unwrap(p) for p in (evaluation.pred_postprocessor, evaluation.dataset_postprocessor,
                                  evaluation.model_postprocessor, getattr(ev, "pred_postprocessor", None))
             if p is not None]
    parts = [*posts, *([retriever] if retriever is not None else [])]
    # missing packages only: an evaluator that says itself it cannot score here (``unavailable()``, e.g. LawBench
    # 2-1's ChERRANT) is refused by ``prepare_tasks`` when a run is prepared or a config linted
    found = _problem(ev, parts, own_check=False, rows=getattr(evaluation, "test_rows", ()) or ())
    if found:
        msg, fix = found
        raise MissingExtraError(f"task {task}: {msg}", file=file, field=f"{evaluation.where}.evaluator.type",
                                value=getattr(ev, "name", type(ev).__name__), expected=fix)
