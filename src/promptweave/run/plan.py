"""Planning a run from a loaded config: one task per dataset × model.

Prompts come from the engine (``PromptBuilder``); backends from the model factory.
Model configs are read as dicts (the config boundary); dataset settings from the
engine's ``DatasetSpec``.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Sequence

from promptweave.errors import ConfigError
from promptweave.evaluate import build_evaluation
from promptweave.models.factory import build_model, cfg_get, generation_params
from promptweave.run.task import Task

_MODES = {"GenInferencer": "gen", "ChatInferencer": "gen", "AttackInferencer": "gen", "SCInferencer": "gen",
          "PPLInferencer": "ppl", "PPLOnlyInferencer": "ppl", "LLInferencer": "ppl", "CLPInferencer": "clp"}


def infer_mode(inferencer_type: str, *, where: str = "infer_cfg.inferencer.type") -> str:
    """gen / ppl / clp for an inferencer type name (OpenCompass names, dotted paths accepted)."""
    name = str(inferencer_type).rsplit(".", 1)[-1]
    if name not in _MODES:
        raise ConfigError("unknown inferencer", field=where, value=name, expected=", ".join(sorted(_MODES)))
    return _MODES[name]


def _gold(row: Any, column: str | None) -> Any:
    if column is None:
        return None
    if isinstance(row, Mapping):
        return row.get(column)
    return getattr(row, column, None)


def plan_config(cfg: Any, *, limit: int | None = None, allow_code: bool = False,
                datasets: Sequence[int] | None = None, models: Sequence[int] | None = None,
                make_model: Callable[[Any], Any] = build_model) -> list[Task]:
    """Every selected dataset × model of a loaded :class:`~promptweave.config.Config` as a :class:`Task`."""
    from promptweave.config import open_dataset, open_model
    from promptweave.engine import PromptBuilder

    ds_ids = list(datasets) if datasets is not None else list(range(len(cfg.datasets)))
    model_ids = list(models) if models is not None else list(range(len(cfg.models)))
    specs = [open_model(cfg, j) for j in model_ids]
    tasks: list[Task] = []
    for i in ds_ids:
        ds = open_dataset(cfg, i)
        raw = cfg.datasets[i]
        where = f"datasets[{i}].infer_cfg.inferencer"
        mode = infer_mode(ds.inferencer.type, where=where + ".type")
        n = len(ds.test) if limit is None else min(limit, len(ds.test))
        output = ds.reader.output_column
        golds = {k: _gold(ds.test[k], output) for k in range(n)}
        for mspec in specs:
            # CLP asks for the next token after the gen-mode prompt
            builder = PromptBuilder(ds, mspec, "gen" if mode == "clp" else mode)
            records = list(builder.build_all(range(n)))
            settings = ds.inferencer.settings
            choices = list(settings.get("choices") or (builder.labels() if mode == "clp" else []))
            mcfg = mspec.config
            tasks.append(Task(
                dataset=ds.abbr, model_name=mspec.abbr, make_model=lambda mcfg=mcfg: make_model(mcfg),
                records=records, mode=mode,
                params=generation_params(mcfg, max_out_len=settings.get("max_out_len"),
                                         stop=settings.get("stopping_criteria")),
                evaluation=build_evaluation(raw.get("eval_cfg"), mode="ppl" if mode != "gen" else "gen",
                                            allow_code=allow_code, where=f"datasets[{i}].eval_cfg"),
                golds=golds, choices=[str(c) for c in choices],
                normalizing_str=ds.inferencer.normalizing_str,
            ))
    return tasks
