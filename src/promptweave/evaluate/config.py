"""Building a dataset's evaluation from its ``eval_cfg`` (OpenCompass names accepted)."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from promptweave.errors import ConfigError
from promptweave.evaluate.evaluators import EVALUATORS, AccEvaluator, PPLAccEvaluator, Scores
from promptweave.evaluate.postprocess import POSTPROCESSORS


def _type_name(t: Any) -> str | None:
    if isinstance(t, str):
        return t.rsplit(".", 1)[-1]
    return getattr(t, "__name__", None)


def _build_postprocessor(cfg: Any, where: str, allow_code: bool) -> Callable[[str], str] | None:
    if cfg is None:
        return None
    if isinstance(cfg, str) or callable(cfg):
        cfg = {"type": cfg}
    if not isinstance(cfg, Mapping) or "type" not in cfg:
        raise ConfigError("a postprocessor is a dict with a 'type'", field=where, value=cfg)
    kwargs = {k: v for k, v in cfg.items() if k != "type"}
    t = cfg["type"]
    name = _type_name(t)
    fn = POSTPROCESSORS.get(name or "")
    if fn is None:
        if callable(t) and allow_code:
            fn = t  # the user opted in to running code from configs
        else:
            raise ConfigError("unknown postprocessor", field=f"{where}.type", value=name or t,
                              expected="one of " + ", ".join(sorted(POSTPROCESSORS))
                              + (" (or a callable, with code execution allowed)" if callable(t) else ""))
    return functools.partial(fn, **kwargs) if kwargs else fn


@dataclass
class Evaluation:
    """Postprocess predictions and gold answers, then score them."""

    evaluator: Any = field(default_factory=AccEvaluator)
    pred_postprocessor: Callable[[str], str] | None = None
    dataset_postprocessor: Callable[[str], str] | None = None
    pred_role: str | None = None

    def process_prediction(self, text: Any) -> Any:
        return self.pred_postprocessor(text) if self.pred_postprocessor and isinstance(text, str) else text

    def process_gold(self, gold: Any) -> Any:
        return self.dataset_postprocessor(gold) if self.dataset_postprocessor and isinstance(gold, str) else gold

    def score(self, predictions: Sequence[Any], golds: Sequence[Any]) -> Scores:
        return self.evaluator.score(predictions, golds)


def build_evaluation(eval_cfg: Mapping[str, Any] | None, *, mode: str = "gen", allow_code: bool = False,
                     where: str = "eval_cfg") -> Evaluation:
    """An :class:`Evaluation` from an ``eval_cfg`` dict (``evaluator``, ``pred_postprocessor``, ...)."""
    cfg = dict(eval_cfg or {})
    ev_cfg = cfg.get("evaluator")
    if ev_cfg is None:
        evaluator: Any = PPLAccEvaluator() if mode == "ppl" else AccEvaluator()
    else:
        if isinstance(ev_cfg, str) or isinstance(ev_cfg, type):
            ev_cfg = {"type": ev_cfg}
        if not isinstance(ev_cfg, Mapping) or "type" not in ev_cfg:
            raise ConfigError("an evaluator is a dict with a 'type'", field=f"{where}.evaluator", value=ev_cfg)
        name = _type_name(ev_cfg["type"])
        cls = EVALUATORS.get(name or "")
        if cls is None:
            raise ConfigError("unknown evaluator", field=f"{where}.evaluator.type", value=name,
                              expected="one of " + ", ".join(sorted(EVALUATORS)))
        evaluator = cls()
    return Evaluation(
        evaluator=evaluator,
        pred_postprocessor=_build_postprocessor(cfg.get("pred_postprocessor"), f"{where}.pred_postprocessor",
                                                allow_code),
        dataset_postprocessor=_build_postprocessor(cfg.get("dataset_postprocessor"),
                                                   f"{where}.dataset_postprocessor", allow_code),
        pred_role=cfg.get("pred_role"),
    )
