"""Planning a run from a loaded config: one task per dataset × model.

Each dataset's inferencer names its form (``compat/inferencers.py``), and the form (``forms/``, through
``forms/registry.py``) checks its settings and the models and makes the tasks; prompts come from the engine
(``PromptBuilder``), backends from the model factory. Model configs are read as dicts (the config boundary);
dataset settings from the engine's ``DatasetSpec``.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

from promptweave.engine.prompt_variants import PROMPT_VARIANTS, check_prompt_variants
from promptweave.errors import PromptweaveError, PromptweaveWarning
from promptweave.models.factory import build_model, check_local_settings, load_token_counter
from promptweave.work.records import Counters, prompt_budget  # noqa: F401 - prompt_budget: public here too
from promptweave.work.task import Task


def infer_mode(inferencer_type: str, *, where: str = "infer_cfg.inferencer.type", settings: Any = None,
               file: str | None = None) -> str:
    """The name of the form an inferencer runs as (``forms/registry.py``); unknown ones are PW160."""
    from promptweave.compat.inferencers import inferencer_name, resolve_inferencer

    base = where[:-len(".type")] if where.endswith(".type") else where
    return resolve_inferencer(inferencer_name(inferencer_type), settings, file=file, field=base)[0].mode


def plan_config(cfg: Any, *, limit: int | None = None, allow_code: bool = False,
                datasets: Sequence[int] | None = None, models: Sequence[int] | None = None,
                make_model: Callable[[Any], Any] = build_model,
                token_counter: Callable[[Any], Any] = load_token_counter, load_data: bool = True,
                opened: dict[int, Any] | None = None, rows: range | None = None) -> list[Task]:
    """Every selected dataset × model of a loaded :class:`~promptweave.config.Config` as a :class:`Task`.

    With ``max_seq_len`` (inferencer or model) each row keeps the leading in-context
    examples that fit (``ShotFitter``), counted with the model's tokenizer
    (``token_counter(model_cfg)``, None when it has none). ``load_data=False`` (``lint --no-data``)
    checks everything but the rows: each task then holds one prompt built from a stand-in row.
    ``opened`` keeps opened datasets by index across calls (``lint`` plans one pair at a time).
    Errors name the config file. ``rows`` (ray executor: one shard) builds only those test rows
    (clipped to the limit).
    """
    try:
        return _plan(cfg, limit=limit, allow_code=allow_code, datasets=datasets, models=models,
                     make_model=make_model, token_counter=token_counter, load_data=load_data,
                     opened={} if opened is None else opened, rows=rows)
    except PromptweaveError as exc:
        if exc.file is None:
            raise exc.at(file=str(cfg.path)) from None
        raise


def _stand_in_dataset(cfg: Any, i: int) -> Any:
    """The dataset's spec with one stand-in row (each column holds ``<name>``) instead of its data."""
    from promptweave.engine.spec import DatasetSpec

    where = f"datasets[{i}]"
    ds = DatasetSpec.from_config(cfg.datasets[i], train=[], test=[], file=str(cfg.path), field_path=where,
                                 check_columns=False)
    cols = list(ds.reader.input_columns)
    if ds.reader.output_column:
        cols.append(ds.reader.output_column)
    row: dict[str, Any] = {c: f"<{c}>" for c in cols}
    labels = list(ds.inferencer.labels or [])
    for tpl in (ds.prompt_template, ds.ice_template):
        if not labels and tpl is not None and getattr(tpl, "is_label_dict", False):
            labels = tpl.labels()
    if labels and ds.reader.output_column:
        row[ds.reader.output_column] = labels[0]  # a label the templates know
    for tpl in (ds.prompt_template, ds.ice_template):
        for col in tpl.expand_columns() if tpl is not None and hasattr(tpl, "expand_columns") else ():
            row[col] = [{"role": "user", "content": f"<{col}>"}]
        # a template written from the row's values (OlympiadBench) gets values it can read
        row.update(getattr(tpl, "stand_in_values", dict)())
    from promptweave.data.stand_in import stand_in_columns  # columns the loader adds (AISBench's 'content')

    row.update({k: v for k, v in stand_in_columns(cfg.datasets[i]).items() if k not in row})
    ds.train, ds.test, ds.same_split = [row], [row], False
    check_placeholders(ds, columns=cols)
    _check_loader(cfg.datasets[i], file=str(cfg.path), where=where)  # loader class resolves
    return ds


def _check_loader(raw: Any, *, file: str, where: str) -> None:
    """The dataset's loader ``type`` resolves (native, or the installed reference's registry), without reading data.

    Uses the data package's own choice (``data.loaders.choose``) when it has one; older layouts had no loader classes.
    """
    try:
        from promptweave.data.loaders import choose, loader_name
    except ImportError:
        return
    try:
        name = loader_name(raw)
        if name is not None:
            choose(name, file=file)
    except PromptweaveError as exc:
        raise exc.at(file=file, prefix=where) from None


def check_loader_runnable(raw: Any, *, file: str, where: str) -> None:
    """For ``lint --no-data``: a loader known only from an unimportable reference's source cannot read the rows
    ``run`` needs, so lint refuses it as run would (after checking everything else with a stand-in row)."""
    try:
        from promptweave.compat.bridge import is_static
        from promptweave.data.loaders import choose, loader_name

        name = loader_name(raw)
        choice = choose(name, file=file) if name is not None else None
        if choice is not None and is_static(choice.fn):
            raise choice.fn.unavailable(file=file, field="type")  # type: ignore[attr-defined]
    except PromptweaveError as exc:
        raise exc.at(file=file, prefix=where) from None


def check_placeholders(ds: Any, columns: Sequence[str]) -> None:
    """Without data only the reader's columns are known (rows may hold more), so only a placeholder that
    differs from one of them in case is reported (``{OPTION_A}`` beside ``option_A``: a warning, the prompt keeps
    it as OpenCompass does); with rows, ``DatasetSpec.check_columns`` checks near misses against the real
    columns."""
    from promptweave.engine.spec import warn_near_miss

    cols = list(dict.fromkeys(columns))
    for name, tpl in (("prompt_template", ds.prompt_template), ("ice_template", ds.ice_template)):
        if tpl is None or not hasattr(tpl, "placeholder_names"):
            continue
        for ph in sorted(tpl.placeholder_names()):
            near = [c for c in cols if c.lower() == ph.lower()]
            if ph.isidentifier() and ph not in cols and near:
                warn_near_miss(ds.file, f"{ds.field}.infer_cfg.{name}.template", ph, near[0])


def _plan(cfg: Any, *, limit: int | None, allow_code: bool, datasets: Sequence[int] | None,
          models: Sequence[int] | None, make_model: Callable[[Any], Any], token_counter: Callable[[Any], Any],
          load_data: bool, opened: dict[int, Any], rows: range | None = None) -> list[Task]:
    from promptweave.compat.inferencers import resolve_inferencer
    from promptweave.compat.models import model_notes
    from promptweave.config.pairs import allowed_pairs, paired
    from promptweave.engine.open import open_dataset, open_model
    from promptweave.forms.base import DatasetPlan
    from promptweave.forms.registry import form_for
    from promptweave.run.estimate import prices

    counters = Counters(token_counter)
    tokenizer_checks: dict[int, Any] = {}  # each model's chat-template check, once per plan
    file = str(cfg.path)

    ds_ids = list(datasets) if datasets is not None else list(range(len(cfg.datasets)))
    model_ids = list(models) if models is not None else list(range(len(cfg.models)))
    specs = [open_model(cfg, j) for j in model_ids]
    from promptweave.compat.key_check import check_dataset_keys, check_keys

    for j in model_ids:
        check_keys(cfg.models[j], "model", file=file, where=f"models[{j}]")  # compat/config_keys.py
        for note in model_notes(cfg.models[j]):
            warnings.warn(f"{file}: models[{j}]: {note}", PromptweaveWarning, stacklevel=3)
        prices(cfg.models[j], file=file, where=f"models[{j}]")  # input_price / output_price, for the estimate
        check_local_settings(cfg.models[j], file=file, where=f"models[{j}]")  # max_batch_tokens, num_threads
    tasks: list[Task] = []
    allowed, every_model = allowed_pairs(cfg), (model_ids, specs)
    for i in ds_ids:
        model_ids, specs = paired(allowed, i, *every_model)  # model_dataset_combinations: this dataset's models
        if not model_ids:
            continue
        ds = opened.get(i)
        if ds is None:
            check_dataset_keys(cfg.datasets[i], file=file, where=f"datasets[{i}]")
            if cfg.datasets[i].get(PROMPT_VARIANTS) is not None:  # user-written variants must build as templates
                check_prompt_variants(cfg.datasets[i], file=file, where=f"datasets[{i}]")
            ds = open_dataset(cfg, i) if load_data else _stand_in_dataset(cfg, i)
            opened[i] = ds
        where = f"datasets[{i}].infer_cfg.inferencer"
        resolved, notes = resolve_inferencer(ds.inferencer.type, ds.inferencer.settings, file=file, field=where)
        for note in notes:
            warnings.warn(f"{file}: {note}", PromptweaveWarning, stacklevel=3)
        n = len(ds.test) if limit is None else min(limit, len(ds.test))
        todo = range(n) if rows is None else range(max(0, rows.start), min(n, rows.stop))  # ray: one shard
        raw = cfg.datasets[i]
        judged = raw.get("judge_infer_cfg") is not None
        if judged:  # AISBench's judge stage: the candidate's task is planned unscored, then judged (evaluate/)
            from promptweave.evaluate.judge_stage import judged_dataset

            raw = judged_dataset(raw, mode=resolved.mode, file=file, where=f"datasets[{i}]")
        # the form checks its settings and each model, and makes each model's task (forms/)
        planned = form_for(resolved.mode).plan(DatasetPlan(
            cfg=cfg, ds=ds, raw=raw, i=i, file=file, where=where, n=n, todo=todo, rows=rows,
            model_ids=model_ids, specs=specs, make_model=make_model, allow_code=allow_code, load_data=load_data,
            counters=counters, tokenizer_checks=tokenizer_checks))
        if judged:
            from promptweave.evaluate.judge_stage import judge_tasks

            judge_tasks(planned, cfg.datasets[i], specs=specs, rows=ds.test, where=f"datasets[{i}]",
                        allow_code=allow_code, file=file)
        tasks += planned
    return tasks
