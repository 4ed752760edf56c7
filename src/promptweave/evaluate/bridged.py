"""A reference evaluator class from an installed reference package, run behind our evaluator interface.

Below the evaluator configuration (``evaluate/config.py``) and the suites that delegate to the reference for
what they do not implement (BFCL's Java categories, LawBench's task 2-1), so they need not reach up to it.
"""
from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores


class BridgedEvaluator:
    """A reference evaluator class from an installed reference package, called with the arguments it asks for.

    Planning (``lint``, ``run --dry-run``, a run's plan) checks that the arguments bind to the class's signature
    and never constructs it: some reference constructors download data (BigCodeBench, LiveCodeBench) or print
    (TruthfulQA). The instance is built when scoring first needs it."""

    needs = frozenset({"rows"})

    def __init__(self, package: str, cls: type, kwargs: Mapping[str, Any], where: str) -> None:
        self.name = f"{package}:{cls.__name__}"
        self.cls, self.kwargs, self.where = cls, dict(kwargs), where
        self._inner: Any = None
        from promptweave.compat.bridge import is_static

        self.static = cls.at(f"{where}.type") if is_static(cls) else None
        if self.static is not None:  # built only when scoring needs it, and that fails typed
            self.cls = self.static  # the handle that names its field (``find_static`` may meet either)
            return
        try:
            sig = inspect.signature(cls)
        except (TypeError, ValueError):
            return  # a signature Python cannot read: the arguments are checked when it is built
        try:
            sig.bind(**self.kwargs)
        except TypeError as exc:
            raise EvaluationError(f"{self.name}: bad arguments ({exc})", field=where,
                                  expected=f"{cls.__name__}{sig}") from None

    @property
    def inner(self) -> Any:
        """The reference's evaluator instance, built on first use (never at plan time)."""
        if self._inner is None and self.static is None:
            try:
                self._inner = self.cls(**self.kwargs)
            except Exception as exc:  # noqa: BLE001 - any failure of foreign code becomes a typed error
                raise EvaluationError(f"{self.name} could not be built ({type(exc).__name__}: {exc})",
                                      field=self.where) from None
        return self._inner

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        if self.static is not None:
            raise self.static.unavailable()
        sig = inspect.signature(self.inner.score).parameters
        avail = {"predictions": list(predictions), "references": list(references),
                 "test_set": list(ctx.rows) if ctx else None,
                 "origin_prompt": list(ctx.prompts) if ctx and ctx.prompts is not None else [None] * len(predictions)}
        try:
            out = dict(self.inner.score(**{k: v for k, v in avail.items() if k in sig}))
        except Exception as exc:  # noqa: BLE001
            raise EvaluationError(f"{self.name} failed ({type(exc).__name__}: {exc})", field="evaluator") from None
        if "error" in out:
            raise EvaluationError(f"{self.name}: {out['error']}", field="evaluator")
        details = out.pop("details", None)
        metrics = {k: float(v) for k, v in out.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        extra = {k: v for k, v in out.items() if k not in metrics}
        rows = list(details.values()) if isinstance(details, Mapping) else list(details or [])
        correct: list[bool | None] = [None] * len(predictions)
        if len(rows) == len(predictions):
            for i, d in enumerate(rows):
                if isinstance(d, Mapping):
                    v = d.get("correct", d.get("is_correct"))
                    correct[i] = None if v is None else bool(v)
        return Scores(metrics, correct, rows or None, extra)
