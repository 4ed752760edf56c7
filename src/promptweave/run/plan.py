"""Planning a run from a loaded config: one task per dataset × model.

Prompts come from the engine (``PromptBuilder``); backends from the model factory.
Model configs are read as dicts (the config boundary); dataset settings from the
engine's ``DatasetSpec``.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Callable, Sequence

from promptweave.errors import ConfigError, PromptweaveWarning
from promptweave.evaluate import build_evaluation
from promptweave.models.factory import build_model, cfg_get, generation_params, load_token_counter, model_name
from promptweave.run.task import Task

_MODES = {"GenInferencer": "gen", "ChatInferencer": "gen", "AttackInferencer": "gen", "SCInferencer": "gen",
          "PPLInferencer": "ppl", "PPLOnlyInferencer": "ppl", "LLInferencer": "ppl", "CLPInferencer": "clp",
          "MultiTurnGenInferencer": "multiturn"}

# eval_cfg keys read by the run (multi-turn scoring), not by the evaluation itself
_SCORE_KEYS = {"score_per": ("turn", "conversation"), "conversation_reduce": ("all", "mean")}


def infer_mode(inferencer_type: str, *, where: str = "infer_cfg.inferencer.type") -> str:
    """gen / ppl / clp / multiturn for an inferencer type name (OpenCompass names, dotted paths accepted)."""
    name = str(inferencer_type).rsplit(".", 1)[-1]
    if name not in _MODES:
        raise ConfigError("unknown inferencer", field=where, value=name, expected=", ".join(sorted(_MODES)))
    return _MODES[name]


def _score_settings(eval_cfg: Any, *, multiturn: bool, where: str) -> tuple[dict, dict[str, str]]:
    """``eval_cfg`` without the multi-turn scoring keys, and those keys' values (checked)."""
    cfg = dict(eval_cfg or {})
    got: dict[str, str] = {}
    for key, allowed in _SCORE_KEYS.items():
        if key not in cfg:
            continue
        value = cfg.pop(key)
        if not multiturn:
            raise ConfigError(f"{key} applies to multi-turn datasets (MultiTurnGenInferencer) only",
                              field=f"{where}.{key}", value=value)
        if value not in allowed:
            raise ConfigError(f"unknown {key}", field=f"{where}.{key}", value=value,
                              expected=" or ".join(repr(a) for a in allowed))
        got[key] = value
    return cfg, got


def _multiturn_tasks(ds: Any, raw: Any, i: int, n: int, model_ids: Sequence[int], specs: Sequence[Any],
                     make_model: Callable[[Any], Any], allow_code: bool, rows: Sequence[int] | None = None) -> list[Task]:
    """One multi-turn task per model: a record per conversation; prompts are built as replies come in."""
    from promptweave.infer.multiturn import MultiTurnGenInferencer
    from promptweave.run.task import ConversationRecord

    where = f"datasets[{i}].eval_cfg"
    eval_cfg, score = _score_settings(raw.get("eval_cfg"), multiturn=True, where=where)
    evaluation = build_evaluation(eval_cfg, mode="gen", allow_code=allow_code, where=where)
    settings = ds.inferencer.settings
    tasks = []
    for _j, mspec in zip(model_ids, specs):
        mcfg = mspec.config
        params = generation_params(mcfg, max_out_len=settings.get("max_out_len"),
                                   stop=settings.get("stopping_criteria"))
        inf = MultiTurnGenInferencer(ds, mspec, params=params)
        records = [ConversationRecord(k, inf.template.n_requests(inf.conversation(k), inf.infer_mode))
                   for k in (range(n) if rows is None else rows)]
        tasks.append(Task(dataset=ds.abbr, model_name=mspec.abbr, make_model=lambda mcfg=mcfg: make_model(mcfg),
                          records=records, mode="multiturn", params=params, evaluation=evaluation,
                          multiturn=inf, score_per=score.get("score_per", "turn"),
                          conversation_reduce=score.get("conversation_reduce", "all")))
    return tasks


def _gold(row: Any, column: str | None) -> Any:
    if column is None:
        return None
    if isinstance(row, Mapping):
        return row.get(column)
    return getattr(row, column, None)


def prompt_budget(inferencer_max: Any, model_max: Any, *, mode: str, max_out_len: int,
                  where: str = "max_seq_len") -> int | None:
    """Most tokens a prompt may have, or None for no limit.

    The inferencer's ``max_seq_len`` bounds the prompt itself (as the reference's
    inferencers check it); the model's bounds prompt + generated tokens, so in gen
    mode ``max_out_len`` is kept free (the reference's model cuts the prompt to that).
    """
    limits = []
    for value, field, reserve in ((inferencer_max, "inferencer.max_seq_len", 0),
                                  (model_max, "model.max_seq_len", max_out_len if mode == "gen" else 0)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError("max_seq_len must be a positive whole number", field=field, value=value)
        limits.append(value - reserve)
    if not limits:
        return None
    budget = min(limits)
    if budget < 1:
        raise ConfigError(f"max_seq_len leaves no room for the prompt after max_out_len={max_out_len}",
                          field=where, value=budget + max_out_len, expected=f"more than {max_out_len}")
    return budget


class _Counters:
    """Each model's token counter, loaded once (tokenizer only) and only when a row has examples to fit."""

    def __init__(self, load: Callable[[Any], Any]) -> None:
        self.load = load
        self.got: dict[int, Any] = {}

    def get(self, j: int, mcfg: Any) -> Any:
        if j not in self.got:
            self.got[j] = self.load(mcfg)
            if self.got[j] is None:
                warnings.warn(f"model {model_name(mcfg)}: no tokenizer to count prompt tokens, so in-context "
                              "examples are not fitted into max_seq_len; set tokenizer_path in its config to fit "
                              "them", PromptweaveWarning, stacklevel=3)
        return self.got[j]


def plan_config(cfg: Any, *, limit: int | None = None, allow_code: bool = False,
                datasets: Sequence[int] | None = None, models: Sequence[int] | None = None,
                make_model: Callable[[Any], Any] = build_model,
                token_counter: Callable[[Any], Any] = load_token_counter,
                rows: range | None = None, opened: Mapping[int, Any] | None = None) -> list[Task]:
    """Every selected dataset × model of a loaded :class:`~promptweave.config.Config` as a :class:`Task`.

    With ``max_seq_len`` (inferencer or model) each row keeps the leading in-context
    examples that fit (``ShotFitter``), counted with the model's tokenizer
    (``token_counter(model_cfg)``, None when it has none).

    ``rows`` (ray executor: one shard) builds only those test rows (clipped to the
    limit); ``opened`` gives already-opened datasets by index (shared, not re-read).
    """
    from promptweave.config import open_dataset, open_model
    from promptweave.engine import PromptBuilder
    from promptweave.engine.fit import ShotFitter

    counters = _Counters(token_counter)

    ds_ids = list(datasets) if datasets is not None else list(range(len(cfg.datasets)))
    model_ids = list(models) if models is not None else list(range(len(cfg.models)))
    specs = [open_model(cfg, j) for j in model_ids]
    tasks: list[Task] = []
    for i in ds_ids:
        ds = opened[i] if opened is not None and i in opened else open_dataset(cfg, i)
        raw = cfg.datasets[i]
        where = f"datasets[{i}].infer_cfg.inferencer"
        mode = infer_mode(ds.inferencer.type, where=where + ".type")
        n = len(ds.test) if limit is None else min(limit, len(ds.test))
        todo = range(n) if rows is None else range(max(0, rows.start), min(n, rows.stop))  # ray: one shard
        if mode == "multiturn":
            tasks += _multiturn_tasks(ds, raw, i, n, model_ids, specs, make_model, allow_code,
                                      None if rows is None else todo)
            continue
        _score_settings(raw.get("eval_cfg"), multiturn=False, where=f"datasets[{i}].eval_cfg")
        output = ds.reader.output_column
        golds = {k: _gold(ds.test[k], output) for k in todo}
        settings = ds.inferencer.settings
        for j, mspec in zip(model_ids, specs):
            # CLP asks for the next token after the gen-mode prompt
            builder = PromptBuilder(ds, mspec, "gen" if mode == "clp" else mode)
            mcfg = mspec.config
            params = generation_params(mcfg, max_out_len=settings.get("max_out_len"),
                                       stop=settings.get("stopping_criteria"))
            budget = prompt_budget(settings.get("max_seq_len"), cfg_get(mcfg, "max_seq_len"), mode=mode,
                                   max_out_len=params.max_out_len, where=f"{where}.max_seq_len")
            count = None
            if budget is not None and any(builder.shot_ids[k] for k in todo):
                count = counters.get(j, mcfg)
            if count is not None:
                records = ShotFitter(builder, count, budget).build_all(todo)
            else:
                records = list(builder.build_all(todo))
            choices = list(settings.get("choices") or (builder.labels() if mode == "clp" else []))
            tasks.append(Task(
                dataset=ds.abbr, model_name=mspec.abbr, make_model=lambda mcfg=mcfg: make_model(mcfg),
                records=records, mode=mode, params=params,
                evaluation=build_evaluation(raw.get("eval_cfg"), mode="ppl" if mode != "gen" else "gen",
                                            allow_code=allow_code, where=f"datasets[{i}].eval_cfg",
                                            # eval hook: the test rows for evaluators, the model's postprocessor
                                            rows=ds.test, model_cfg=mcfg),
                golds=golds, choices=[str(c) for c in choices],
                normalizing_str=ds.inferencer.normalizing_str,
            ))
    return tasks
