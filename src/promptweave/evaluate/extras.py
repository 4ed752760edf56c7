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


def require_task(evaluation: Any, *, task: str, file: str | None = None, retriever: Any = None,
                 retriever_where: str = "infer_cfg.retriever") -> None:
    """Before any model call: one :class:`MissingExtraError` naming ``task`` ("dataset × model") when its
    evaluator, postprocessors or retriever need a package that is not installed. Its field is the part that needs
    it (``eval_cfg.evaluator.type``, ``eval_cfg.pred_postprocessor.type``, ``<retriever_where>.type``, in that
    order); the message names every part that lacks a package, the fix every extra."""
    if evaluation is None:
        return
    ev = evaluation.evaluator
    where = evaluation.where
    # the evaluator with its own postprocessor and the model's (both run as part of scoring), then the eval_cfg's
    # postprocessors, then the retriever: each blamed in its own field
    parts: list[tuple[str, list[Any]]] = [
        (f"{where}.evaluator.type", [ev, *_present(getattr(ev, "pred_postprocessor", None),
                                                   evaluation.model_postprocessor)]),
        (f"{where}.pred_postprocessor.type", _present(evaluation.pred_postprocessor)),
        (f"{where}.dataset_postprocessor.type", _present(evaluation.dataset_postprocessor)),
        (f"{retriever_where}.type", _present(retriever)),
    ]
    rows = getattr(evaluation, "test_rows", ()) or ()
    # missing packages only: an evaluator that says itself it cannot score here (``unavailable()``, e.g. LawBench
    # 2-1's ChERRANT) is refused by ``prepare_tasks`` when a run is prepared or a config linted
    found = [(field_, _name(objs[0]), gaps) for field_, objs in parts if (gaps := _missing_of(objs, rows))]
    if not found:
        return
    what = "; ".join(f"{who} needs {describe(gaps)[0]}" for _field, who, gaps in found)
    _, fix = describe([g for *_rest, gaps in found for g in gaps])
    raise MissingExtraError(f"task {task}: {what}", file=file, field=found[0][0], value=found[0][1], expected=fix)


def _present(*objs: Any) -> list[Any]:
    return [_unwrap(o) for o in objs if o is not None]


def _name(obj: Any) -> str:
    return str(getattr(obj, "name", None) or getattr(obj, "__name__", None) or type(obj).__name__)
