"""Planning a run from a loaded config: one task per dataset × model.

Reads the engine's typed config objects defensively (attribute or dict access), so it
works with the config loader's dataclasses as well as plain OpenCompass-style dicts.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from promptweave.errors import ConfigError
from promptweave.evaluate import build_evaluation
from promptweave.models.factory import build_model, cfg_get, generation_params, model_name, type_name
from promptweave.run.task import Task

_MODES = {"GenInferencer": "gen", "ChatInferencer": "gen", "AttackInferencer": "gen", "PPLInferencer": "ppl",
          "PPLOnlyInferencer": "ppl", "CLPInferencer": "clp", "LLInferencer": "ppl"}


def dataset_name(ds: Any) -> str:
    return str(cfg_get(ds, "abbr") or cfg_get(ds, "name") or cfg_get(ds, "path") or "dataset")


def inferencer_cfg(ds: Any) -> Any:
    infer = cfg_get(ds, "infer_cfg")
    return cfg_get(infer, "inferencer") if infer is not None else None


def infer_mode(ds: Any) -> str:
    """gen / ppl / clp, from the dataset's ``mode`` or its inferencer's type."""
    mode = cfg_get(ds, "mode")
    if mode in ("gen", "ppl", "clp"):
        return mode
    inf = inferencer_cfg(ds)
    name = type_name(inf) if inf is not None else "GenInferencer"
    if name not in _MODES:
        raise ConfigError("unknown inferencer", field=f"datasets[{dataset_name(ds)}].infer_cfg.inferencer.type",
                          value=name, expected=", ".join(sorted(_MODES)))
    return _MODES[name]


def plan_tasks(datasets: Sequence[Any], models: Sequence[Any],
               build_prompts: Callable[..., list], *, limit: int | None = None,
               allow_code: bool = False, make_model: Callable[[Any], Any] = build_model) -> list[Task]:
    """Every dataset × model as a :class:`Task`, with prompts built by the engine's ``build_prompts``."""
    tasks: list[Task] = []
    for m in models:
        for ds in datasets:
            mode = infer_mode(ds)
            inf = inferencer_cfg(ds)
            indices = range(limit) if limit is not None else None
            records = build_prompts(ds, m, mode=mode, indices=indices)
            reader = cfg_get(ds, "reader_cfg")
            params = generation_params(m, max_out_len=cfg_get(inf, "max_out_len") if inf is not None else None,
                                       stop=cfg_get(inf, "stopping_criteria") if inf is not None else None)
            tasks.append(Task(
                dataset=dataset_name(ds), model_name=model_name(m),
                make_model=lambda m=m: make_model(m), records=records, mode=mode, params=params,
                evaluation=build_evaluation(cfg_get(ds, "eval_cfg"), mode=mode, allow_code=allow_code,
                                            where=f"datasets[{dataset_name(ds)}].eval_cfg"),
                gold_column=cfg_get(reader, "output_column") if reader is not None else None,
                choices=list(cfg_get(inf, "choices") or []) if inf is not None else [],
                normalizing_str=cfg_get(inf, "normalizing_str") if inf is not None else None,
            ))
    return tasks
