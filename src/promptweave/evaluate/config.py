"""Building a dataset's evaluation from its ``eval_cfg`` (OpenCompass / AISBench names accepted).

Everything is resolved here, at plan time, without predictions: an unknown name, a bad argument or a missing
``--allow-code-exec`` / judge model fails ``lint`` and ``run --dry-run`` before any model call.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from promptweave.errors import (
    CodeExecutionError,
    ConfigError,
    EvaluationError,
    JudgeError,
    PromptweaveError,
)
from promptweave.evaluate.bridged import BridgedEvaluator
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import AccEvaluator, PPLAccEvaluator


def _type_name(t: Any) -> str | None:
    if isinstance(t, str):
        return t.rsplit(".", 1)[-1]
    return getattr(t, "__name__", None)


def _registries() -> tuple[dict, dict]:
    from promptweave.compat.evaluators import EVALUATORS
    from promptweave.compat.postprocessors import POSTPROCESSORS

    return EVALUATORS, POSTPROCESSORS


def _check_kwargs(fn: Callable, kwargs: Mapping[str, Any], name: str, where: str) -> None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    known = {p.name for p in params[1:]}  # the first parameter is the text
    for k in kwargs:
        if k not in known:
            raise EvaluationError(f"{name} takes no argument {k!r}", field=f"{where}.{k}", value=kwargs[k],
                                  expected=", ".join(sorted(known)) or "no arguments")
    missing = [p.name for p in params[1:] if p.default is p.empty and p.kind is not p.VAR_POSITIONAL
               and p.name not in kwargs]
    if missing:
        raise EvaluationError(f"{name} needs the argument {missing[0]!r}", field=f"{where}.{missing[0]}")


def build_postprocessor(cfg: Any, where: str, allow_code: bool = False) -> Callable[[Any], Any] | None:
    """A one-argument callable from ``dict(type=name, **kwargs)``; kwargs are checked against the function."""
    if cfg is None:
        return None
    if isinstance(cfg, str) or callable(cfg):
        cfg = {"type": cfg}
    if not isinstance(cfg, Mapping) or "type" not in cfg:
        raise ConfigError("a postprocessor is a dict with a 'type'", field=where, value=cfg)
    kwargs = {k: v for k, v in cfg.items() if k != "type"}
    t = cfg["type"]
    name = _type_name(t) or ""
    _, posts = _registries()
    from promptweave.compat.origin import lookup

    fn = lookup(posts, t, name)
    if fn is None:
        from promptweave.compat.bridge import reference_class

        found = reference_class("postprocessor", name)
        if found is not None:
            fn = found[1]
            from promptweave.compat.bridge import is_static

            if is_static(fn):  # a function read from an unimportable reference names its field
                fn = fn.at(f"{where}.type")
        elif callable(t) and allow_code:
            fn = t  # the user opted in to running code from configs
        else:
            raise EvaluationError("unknown postprocessor", field=f"{where}.type", value=name or t,
                                  expected="a name promptweave implements (see README, Evaluation), or install the "
                                  "reference package (opencompass / ais_bench) for its registered ones"
                                  + (", or a callable with --trust-config" if callable(t) else ""))
    else:
        _check_kwargs(fn, kwargs, name, where)
    return functools.partial(fn, **kwargs) if kwargs else fn


class NoEvaluator:
    """``evaluator=dict()``: the dataset names no evaluator (e.g. OJBench, scored by its own judge system).

    OpenCompass 0.5.4 runs the inference and then fails at its evaluation step; here the predictions are written
    as usual and scoring fails with this typed error (the task's predictions stay for external scoring)."""

    name = "no evaluator"
    needs: frozenset[str] = frozenset()
    pred_postprocessor = None

    def __init__(self, where: str) -> None:
        import warnings

        from promptweave.errors import PromptweaveWarning

        self.where = where
        warnings.warn(f"{where} is an empty dict: predictions are written but not scored (OpenCompass fails at "
                      "its evaluation step here too)", PromptweaveWarning, stacklevel=3)

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        raise EvaluationError("the dataset's evaluator is an empty dict, so there is nothing to score with (the "
                              "predictions are kept; OpenCompass 0.5.4 fails at this step too)", field=self.where,
                              value={}, expected="evaluator=dict(type=...) naming an evaluator")


def build_evaluator(cfg: Any, where: str, *, mode: str = "gen", allow_code: bool = False,
                    subjective: Mapping[str, Any] | None = None) -> Any:
    """An evaluator instance from ``dict(type=Name, **kwargs)`` (native, else bridged, else EvaluationError).

    ``subjective``: the dataset config's subjective-evaluation keys (``mode``, ``base_models``...) for judges."""
    from promptweave.evaluate.judge import CascadeEvaluator, GenericLLMEvaluator
    from promptweave.evaluate.judge_lm import LMEvaluator

    if cfg is None:
        return PPLAccEvaluator() if mode == "ppl" else AccEvaluator()
    if isinstance(cfg, Mapping) and not cfg:
        return NoEvaluator(where)
    if isinstance(cfg, (str, type)):
        cfg = {"type": cfg}
    if not isinstance(cfg, Mapping) or "type" not in cfg:
        raise ConfigError("an evaluator is a dict with a 'type'", field=where, value=cfg)
    kwargs = {k: v for k, v in cfg.items() if k != "type"}
    name = _type_name(cfg["type"]) or ""
    evs, _ = _registries()
    from promptweave.compat.origin import lookup, module_of

    cls = lookup(evs, cfg["type"], name)
    from promptweave.compat.evaluators import BY_MODULE
    from promptweave.compat.suites import resolve

    origin = module_of(cfg["type"])
    for (module_part, short), alt in BY_MODULE.items():
        if short == name and f".{module_part}." in f".{origin}.":
            cls = resolve(alt)
    post = build_postprocessor(kwargs.pop("pred_postprocessor", None), f"{where}.pred_postprocessor", allow_code)
    if cls is None:
        from promptweave.compat.bridge import reference_class

        found = reference_class("evaluator", name, origin)
        if found is None:
            raise EvaluationError("unknown evaluator", field=f"{where}.type", value=name,
                                  expected="a name promptweave implements (see README, Evaluation), or install the "
                                  "reference package (opencompass / ais_bench) for its registered evaluators")
        inst: Any = BridgedEvaluator(found[0], found[1], kwargs, where)
    elif cls is LMEvaluator:
        # its pred_postprocessor is its own (the subjective task applies it), built with the other settings
        if post is not None:
            kwargs["pred_postprocessor"] = cfg.get("pred_postprocessor")
        return cls(**kwargs, where=where, build_post=lambda c, w: build_postprocessor(c, w, allow_code),
                   subjective=subjective)
    elif cls is GenericLLMEvaluator:
        try:
            inst = cls(**kwargs, pred_postprocessor=None, where=where,
                       build_post=lambda c, w: build_postprocessor(c, w, allow_code))
        except TypeError as exc:
            raise JudgeError(f"{name}: bad arguments ({exc})", field=where,
                             expected=str(inspect.signature(cls))) from None
        inst.pred_postprocessor = post
        return inst
    elif cls is CascadeEvaluator:
        try:
            inst = cls(**kwargs, where=where,
                       build=lambda c, w: build_evaluator(c, w, mode=mode, allow_code=allow_code))
        except TypeError as exc:
            raise EvaluationError(f"{name}: {exc}", field=where) from None
        return inst
    else:
        native_for = getattr(cls, "native_for", None)
        if callable(native_for) and not native_for(kwargs):
            # a setting the native class does not implement (a judge server...): the installed reference's own
            # class, as when the name is not native; without it the native class refuses with its own reason
            from promptweave.compat.bridge import reference_class

            found = reference_class("evaluator", name, origin)
            if found is not None:
                inst = BridgedEvaluator(found[0], found[1], kwargs, where)
                inst.pred_postprocessor = post
                return inst
        try:
            inst = cls(**kwargs)
        except TypeError as exc:
            raise EvaluationError(f"{name}: bad arguments ({exc})", field=where,
                                  expected=str(inspect.signature(cls))) from None
        except PromptweaveError as exc:
            raise _relocated(exc, where) from None
    inst.pred_postprocessor = post
    return inst


@dataclass
class Evaluation:
    """Postprocess predictions and gold answers, then score them."""

    evaluator: Any = field(default_factory=AccEvaluator)
    pred_postprocessor: Callable[[str], Any] | None = None
    dataset_postprocessor: Callable[[str], Any] | None = None
    # OpenCompass's pred_role extraction never changes a prediction (its whitespace test always matches), so it is
    # kept for the record only
    pred_role: str | None = None
    where: str = "eval_cfg"
    # a model config's own ``pred_postprocessor`` (e.g. removing <think> blocks), applied before the dataset's
    model_postprocessor: Callable[[str], Any] | None = None
    # set after planning: the dataset's test rows (by row index), the judge factory and the code-exec opt-in
    test_rows: Sequence[Any] = ()
    judge: Callable[[Any], tuple[Any, Any]] | None = None
    allow_code_exec: bool = False
    code_sandbox: str = "bwrap"
    dataset_abbr: str | None = None
    model_abbr: str | None = None

    @property
    def needs(self) -> frozenset[str]:
        return frozenset(getattr(self.evaluator, "needs", frozenset()))

    @property
    def evaluator_name(self) -> str:
        return str(getattr(self.evaluator, "name", type(self.evaluator).__name__))

    def process_prediction(self, text: Any) -> Any:
        if self.model_postprocessor and isinstance(text, str):
            text = self.model_postprocessor(text)
        return self.pred_postprocessor(text) if self.pred_postprocessor and isinstance(text, str) else text

    def process_gold(self, gold: Any) -> Any:
        """The gold through ``dataset_postprocessor``, whatever its type (OpenCompass maps every row's output
        column: StrategyQA's bool gold becomes yes/no); a row without a gold (None) is left as it is."""
        if self.dataset_postprocessor is None or gold is None:
            return gold
        try:
            return self.dataset_postprocessor(gold)
        except PromptweaveError:
            raise
        except Exception as exc:  # noqa: BLE001 - a postprocessor given a gold it cannot read: typed, with the value
            raise EvaluationError(f"the dataset_postprocessor failed on a gold answer ({type(exc).__name__}: {exc})",
                                  field=f"{self.where}.dataset_postprocessor", value=gold,
                                  expected="a postprocessor that takes the output column's values") from None

    def check(self, *, allow_code_exec: bool = False, judge: bool = False) -> None:
        """Refuse, before any model call, what scoring would refuse: code without the flag, a judge without a model."""
        if "code" in self.needs and not allow_code_exec:
            from promptweave.evaluate.code_exec import FLAG

            raise CodeExecutionError(f"{self.evaluator_name} runs the model's code; it only runs with {FLAG}",
                                     field=f"{self.where}.evaluator.type", value=self.evaluator_name,
                                     expected=f"promptweave run {FLAG} ... (code runs in the OS sandbox, bubblewrap)")
        if "judge" in self.needs and not judge and not _has_judge_cfg(self.evaluator):
            raise JudgeError(f"{self.evaluator_name} needs a judge model: judge_cfg is empty",
                             field=f"{self.where}.evaluator.judge_cfg", expected="a model dict, or --judge-model")

    def context(self, indices: Sequence[int], *, prompts: Sequence[Any] | None = None, cache: Any = None,
                workdir: Any = None, progress: Callable[[int], None] | None = None) -> EvalContext:
        """The :class:`EvalContext` for scoring the rows ``indices`` (test-row positions) of this dataset."""
        rows = [self.test_rows[i] if 0 <= i < len(self.test_rows) else {} for i in indices]
        return EvalContext(rows=rows, prompts=prompts, cache=cache, judge=self.judge, workdir=workdir,
                           allow_code_exec=self.allow_code_exec, code_sandbox=self.code_sandbox, where=self.where,
                           progress=progress,
                           dataset=self.dataset_abbr, model=self.model_abbr)

    def score(self, predictions: Sequence[Any], golds: Sequence[Any], ctx: EvalContext | None = None) -> Scores:
        ev = self.evaluator
        own = getattr(ev, "pred_postprocessor", None)
        if callable(own) and not getattr(ev, "needs", frozenset()) & {"judge"}:
            predictions = [own(p) if isinstance(p, str) else p for p in predictions]
        try:
            return ev.score(predictions, golds, ctx)
        except PromptweaveError as exc:
            if exc.field and not exc.field.startswith(self.where):
                raise _relocated(exc, f"{self.where}.evaluator") from None
            raise


def _relocated(exc: PromptweaveError, where: str) -> PromptweaveError:
    """An evaluator's own ``evaluator.x`` field placed under the config path being built."""
    field_ = exc.field or ""
    if field_ == "evaluator" or field_.startswith("evaluator."):
        field_ = where + field_[len("evaluator"):]
    new = type(exc).__new__(type(exc))
    PromptweaveError.__init__(new, exc.message, file=exc.file, field=field_ or where, value=exc.value,
                              expected=exc.expected)
    return new


def _has_judge_cfg(ev: Any) -> bool:
    llm = getattr(ev, "llm", ev)
    return bool(getattr(llm, "judge_cfg", None))


def build_evaluation(eval_cfg: Mapping[str, Any] | None, *, mode: str = "gen", allow_code: bool = False,
                     where: str = "eval_cfg", rows: Sequence[Any] = (), model_cfg: Any = None,
                     dataset_cfg: Mapping[str, Any] | None = None, file: str | None = None,
                     names: tuple[str | None, str | None] = (None, None)) -> Evaluation:
    """An :class:`Evaluation` from an ``eval_cfg`` dict (``evaluator``, ``pred_postprocessor``, ...); the model
    config's own ``pred_postprocessor``, if any, runs first (as OpenCompass applies it). ``dataset_cfg`` (the
    whole dataset dict) gives judges its subjective settings; ``names``: the (dataset, model) abbrs."""
    from promptweave.evaluate.judge_lm import subjective_settings

    cfg = dict(eval_cfg or {})
    model_post = model_cfg.get("pred_postprocessor") if isinstance(model_cfg, Mapping) else None
    subjective = subjective_settings(dataset_cfg, file)
    if names[0]:
        subjective["abbr"] = names[0]
    return Evaluation(
        dataset_abbr=names[0], model_abbr=names[1],
        evaluator=build_evaluator(cfg.get("evaluator"), f"{where}.evaluator", mode=mode, allow_code=allow_code,
                                  subjective=subjective),
        pred_postprocessor=build_postprocessor(cfg.get("pred_postprocessor"), f"{where}.pred_postprocessor",
                                               allow_code),
        dataset_postprocessor=build_postprocessor(cfg.get("dataset_postprocessor"),
                                                  f"{where}.dataset_postprocessor", allow_code),
        pred_role=cfg.get("pred_role"),
        where=where,
        test_rows=rows,
        model_postprocessor=build_postprocessor(model_post, "model.pred_postprocessor", allow_code),
    )


def prepare_tasks(tasks: Sequence[Any], *, allow_code_exec: bool = False, judge_model: Any = None,
                  make_model: Callable[[Any], Any] | None = None, check_only: bool = False,
                  code_sandbox: str = "bwrap") -> None:
    """After planning, before any model call: check every task's evaluation (code flag, judge model) and give it
    the judge factory (``judge_model``: the ``--judge-model`` config used where ``judge_cfg`` is empty). Tasks that
    run model code get ``code_sandbox``, which must work here (``--code-sandbox``; see ``os_sandbox.require``)."""
    from promptweave.evaluate.judge import make_judge_factory
    from promptweave.evaluate.sandbox_plan import apply_code_sandbox

    factory = None if check_only else make_judge_factory(judge_model, make_model)
    if allow_code_exec:
        apply_code_sandbox(tasks, code_sandbox)
    for t in tasks:
        if getattr(t, "mode", None) == "agent" and t.refused is None:  # agent hook: runs code
            from promptweave.evaluate.python_session import require_code_exec

            require_code_exec(allow_code_exec, field=t.settings.get("where") or "infer_cfg.inferencer",
                              value=t.settings.get("infer_mode"))
        ev = getattr(t, "evaluation", None)
        if ev is None:
            continue
        ev.check(allow_code_exec=allow_code_exec, judge=bool(judge_model))
        # an evaluator that says itself it cannot score here is refused (lint makes this check too)
        from promptweave.evaluate.extras import require

        require(ev.evaluator, ev.where)
        ev.allow_code_exec = allow_code_exec
        ev.judge = factory


def check_tasks(tasks: Sequence[Any], *, allow_code_exec: bool = False, judge: bool = False) -> None:
    """Plan-time check only (``lint``, ``run --dry-run``); see :meth:`Evaluation.check`."""
    for t in tasks:
        ev = getattr(t, "evaluation", None)
        if ev is not None:
            ev.check(allow_code_exec=allow_code_exec, judge=judge)


def check_eval_cfg(eval_cfg: Mapping[str, Any] | None, *, where: str = "eval_cfg", file: str | None = None,
                   mode: str = "gen", allow_code: bool = False, allow_code_exec: bool = False,
                   judge: bool = False) -> Evaluation:
    """For ``lint``: resolve every evaluator / postprocessor name and argument of an ``eval_cfg`` and run the
    plan-time checks, without data or predictions; errors carry ``file``. Returns the built evaluation."""
    try:
        ev = build_evaluation(eval_cfg, mode=mode, allow_code=allow_code, where=where)
        ev.check(allow_code_exec=allow_code_exec, judge=judge)
    except PromptweaveError as exc:
        raise (exc.at(file=file) if file and not exc.file else exc) from None
    return ev
