"""Planning a run from a loaded config: one task per dataset × model.

Prompts come from the engine (``PromptBuilder``); backends from the model factory.
Model configs are read as dicts (the config boundary); dataset settings from the
engine's ``DatasetSpec``.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Callable, Sequence

from promptweave.errors import ConfigError, DataError, PromptweaveError, PromptweaveWarning, RoleError, UnsupportedError
from promptweave.evaluate import build_evaluation
from promptweave.models.factory import build_model, cfg_get, generation_params, load_token_counter, model_name
from promptweave.run.task import LazyRecords, Task

# eval_cfg keys read by the run (multi-turn scoring), not by the evaluation itself
_SCORE_KEYS = {"score_per": ("turn", "conversation"), "conversation_reduce": ("all", "mean")}


def infer_mode(inferencer_type: str, *, where: str = "infer_cfg.inferencer.type", settings: Any = None,
               file: str | None = None) -> str:
    """The form (gen / ppl / clp / multiturn / sc / ll / ppl_only) an inferencer runs as; unknown ones are PW160."""
    from promptweave.compat.inferencers import inferencer_name, resolve_inferencer

    base = where[:-len(".type")] if where.endswith(".type") else where
    return resolve_inferencer(inferencer_name(inferencer_type), settings, file=file, field=base)[0].mode


_SCORING = ("ppl", "ll", "ppl_only", "clp", "inference_ppl", "sw_ce_loss")


def check_scoring_model(mode: str, mcfg: Any, *, file: str | None, where: str) -> None:
    """Perplexity-type scoring needs per-token log-probs of the prompt, which a chat endpoint cannot give."""
    from promptweave.compat.models import MODEL_TYPES, type_name

    mt = MODEL_TYPES.get(type_name(cfg_get(mcfg, "type")))
    kind = cfg_get(mcfg, "kind") or (mt.kind if mt else None)
    if mode == "function_call":  # data hook: tools need an OpenAI-compatible API model
        from promptweave.infer.function_call import check_model

        check_model(mcfg, file=file, where=where)
    if mode in _SCORING and mt is not None and mt.backend == "openai" and kind == "api":
        raise UnsupportedError(
            f"{mode} scoring needs the log-probability of every prompt token, which a chat API does not return",
            file=file, field=f"{where}.kind", value=kind,
            expected="kind='lm' on an OpenAI-compatible /completions endpoint that returns prompt logprobs "
                     "(echo, e.g. vLLM), or a local model (HuggingFaceBaseModel, VLLM)")


def _score_settings(eval_cfg: Any, *, multiturn: bool, where: str) -> tuple[dict, dict[str, str]]:
    """``eval_cfg`` without the multi-turn scoring keys, and those keys' values (checked)."""
    if eval_cfg is not None and not isinstance(eval_cfg, Mapping):
        raise ConfigError("eval_cfg must be a dict", field=where, value=eval_cfg,
                          expected="dict(evaluator=dict(type=...), pred_postprocessor=...)")
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


def _chat_task(ds: Any, mspec: Any, todo: range, params: Any, evaluation: Any, golds: dict,
               make_model: Callable[[Any], Any], file: str) -> Task:
    """ChatInferencer every / every_with_gt: a record per row's chat, run by the multi-turn loop, scored per row."""
    from promptweave.infer.chat_turns import chat_turns_inferencer
    from promptweave.run.task import ConversationRecord

    inf = chat_turns_inferencer(ds, mspec, params=params, file=file)
    records = [ConversationRecord(k, inf.template.n_requests(inf.conversation(k), inf.infer_mode)) for k in todo]
    mcfg = mspec.config
    return Task(dataset=ds.abbr, model_name=mspec.abbr, make_model=lambda mcfg=mcfg: make_model(mcfg),
                records=records, mode="chat", params=params, evaluation=evaluation,
                golds={k: golds.get(k) for k in todo}, multiturn=inf)


def _agent_task(ds: Any, mspec: Any, todo: range, params: Any, evaluation: Any, golds: dict,
                make_model: Callable[[Any], Any], file: str, mcfg_raw: Any, where: str, inf_where: str) -> Task:
    """agent helper: AgentInferencer every / every_with_gt, a record per row's chat, run by the agent loop."""
    from promptweave.infer.agent import AgentInferencer, agent_llm, agent_settings, default_data_dir
    from promptweave.run.task import ConversationRecord

    settings = default_data_dir(agent_settings(mcfg_raw, file=file, where=where))
    if agent_llm(mcfg_raw) is not mcfg_raw:  # a CodeAgent / LagentAgent: its llm is the model that is sent prompts
        from promptweave.engine.spec import ModelSpec

        llm = agent_llm(mcfg_raw)
        mspec = ModelSpec.from_config(llm, file=file, field_path=f"{where}.llm")
    inf = AgentInferencer(ds, mspec, ds.inferencer.settings.get("infer_mode"), settings, file=file)
    records = [ConversationRecord(k, len(inf.conversation(k))) for k in todo]
    mcfg = agent_llm(mspec.config)
    return Task(dataset=ds.abbr, model_name=mspec.abbr, make_model=lambda mcfg=mcfg: make_model(mcfg),
                records=records, mode="agent", params=params, evaluation=evaluation,
                golds={k: golds.get(k) for k in todo}, multiturn=inf,
                settings={"infer_mode": inf.infer_mode, "agent": settings.source, "where": inf_where})


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
        # forms hook: a template written from the row's values (OlympiadBench) gets values it can read
        row.update(getattr(tpl, "stand_in_values", dict)())
    try:  # data hook: columns the loader adds beyond reader_cfg (AISBench's multimodal 'content')
        from promptweave.data.stand_in import stand_in_columns
    except ImportError:
        stand_in_columns = None
    if stand_in_columns is not None:
        row.update({k: v for k, v in stand_in_columns(cfg.datasets[i]).items() if k not in row})
    ds.train, ds.test, ds.same_split = [row], [row], False
    check_placeholders(ds, columns=cols)
    _check_loader(cfg.datasets[i], file=str(cfg.path), where=where)  # data hook: loader class resolves
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


def _shots_for_stand_in(ds: Any) -> list[int]:
    if ds.ice_template is None or type(ds.retriever).__name__ == "ZeroRetriever":
        return []
    return [0] if ds.template.ice_token else []


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


def _judge_models(obj: Any, path: str) -> list[tuple[str, Any]]:
    """Every ``judge_cfg`` with a model ``type`` inside an ``eval_cfg`` (LLM-as-judge evaluators, nested ones too)."""
    out: list[tuple[str, Any]] = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            sub = f"{path}.{k}"
            if k == "judge_cfg" and isinstance(v, Mapping) and v.get("type") is not None:
                out.append((sub, v))
            else:
                out += _judge_models(v, sub)
    elif isinstance(obj, (list, tuple)):
        for n, v in enumerate(obj):
            out += _judge_models(v, f"{path}[{n}]")
    return out


def _locate_role(obj: Any, role: Any, path: str) -> str | None:
    """The config path of the first turn whose role (or fallback_role) is ``role``."""
    if isinstance(obj, Mapping):
        for key in ("role", "fallback_role"):
            if obj.get(key) == role:
                return f"{path}.{key}"
        for k, v in obj.items():
            found = _locate_role(v, role, f"{path}.{k}" if isinstance(k, str) and k.isidentifier()
                                 else f"{path}[{k!r}]")
            if found:
                return found
    elif isinstance(obj, (list, tuple)):
        for n, v in enumerate(obj):
            found = _locate_role(v, role, f"{path}[{n}]")
            if found:
                return found
    return None


def _role_error(exc: Any, raw: Any, i: int, j: int, file: str) -> Any:
    """A role error from rendering, re-located at the template turn that names the role (PW120 names the field)."""
    from promptweave.errors import RoleError

    infer = raw.get("infer_cfg") or {}
    field = None
    for name in ("prompt_template", "ice_template"):
        tpl = infer.get(name)
        if isinstance(tpl, Mapping):
            field = _locate_role(tpl, exc.value, f"datasets[{i}].infer_cfg.{name}")
        if field:
            break
    return RoleError(f"{exc.message} (the meta template of models[{j}])", file=file,
                     field=field or f"datasets[{i}].infer_cfg.prompt_template", value=exc.value,
                     expected=exc.expected)


def _conts(ds: Any, n: int | Sequence[int], where: str) -> dict[int, Any]:
    out = {}
    for k in (range(n) if isinstance(n, int) else n):
        row = ds.test[k]
        if "cont" not in row:
            raise DataError("LLInferencer scores each row's 'cont' column, which this row lacks", file=ds.file,
                            field=f"{where}.test[{k}].cont", expected="a 'cont' column in the rows (list it in reader_cfg.input_columns if the reader drops it)")
        out[k] = row["cont"]
    return out


def _records(builder: Any, ds: Any, n: int | range, load_data: bool, budget: int | None, counters: "_Counters",
             j: int, mcfg: Any) -> list[Any]:
    """Every row's prompts (in-context examples fitted to the budget), or the stand-in row's without data."""
    from promptweave.engine.fit import ShotFitter

    if not load_data:
        return builder.build_row(0, ids=_shots_for_stand_in(ds))
    todo = range(n) if isinstance(n, int) else n  # ray helper: a shard's row range
    count = None
    if budget is not None and any(builder.shot_ids[k] for k in todo):
        count = counters.get(j, mcfg)
    if count is not None:
        return list(ShotFitter(builder, count, budget).build_all(todo))
    # reliability: built batch by batch as the task runs, never all at once; the first row now, so a template
    # error still stops the plan before anything is sent
    if todo:
        list(builder.build_all([todo[0]]))
    return LazyRecords(builder.build_all, todo, per_row=1 if builder.mode != "ppl" else max(1, len(builder.labels())),
                       chunks=builder.record_chunks)


def _plan(cfg: Any, *, limit: int | None, allow_code: bool, datasets: Sequence[int] | None,
          models: Sequence[int] | None, make_model: Callable[[Any], Any], token_counter: Callable[[Any], Any],
          load_data: bool, opened: dict[int, Any], rows: range | None = None) -> list[Task]:
    from promptweave.compat.inferencers import resolve_inferencer
    from promptweave.compat.models import model_notes, resolve_model_type
    from promptweave.config import open_dataset, open_model
    from promptweave.engine import PromptBuilder

    counters = _Counters(token_counter)
    file = str(cfg.path)

    ds_ids = list(datasets) if datasets is not None else list(range(len(cfg.datasets)))
    model_ids = list(models) if models is not None else list(range(len(cfg.models)))
    specs = [open_model(cfg, j) for j in model_ids]
    for j in model_ids:
        for note in model_notes(cfg.models[j]):
            warnings.warn(f"{file}: models[{j}]: {note}", PromptweaveWarning, stacklevel=3)
    tasks: list[Task] = []
    for i in ds_ids:
        ds = opened.get(i)
        if ds is None:
            ds = open_dataset(cfg, i) if load_data else _stand_in_dataset(cfg, i)
            opened[i] = ds
        raw = cfg.datasets[i]
        where = f"datasets[{i}].infer_cfg.inferencer"
        settings = ds.inferencer.settings
        form, notes = resolve_inferencer(ds.inferencer.type, settings, file=file, field=where)
        for note in notes:
            warnings.warn(f"{file}: {note}", PromptweaveWarning, stacklevel=3)
        mode = form.mode
        n = len(ds.test) if limit is None else min(limit, len(ds.test))
        todo = range(n) if rows is None else range(max(0, rows.start), min(n, rows.stop))  # ray: one shard
        if mode == "multiturn":
            n = n if load_data else 0  # a conversation's turns come from real rows
            tasks += _multiturn_tasks(ds, raw, i, n, model_ids, specs, make_model, allow_code,
                                      None if rows is None else todo)
            continue
        _score_settings(raw.get("eval_cfg"), multiturn=False, where=f"datasets[{i}].eval_cfg")
        for jwhere, jcfg in _judge_models(raw.get("eval_cfg"), f"datasets[{i}].eval_cfg"):
            resolve_model_type(jcfg, file=file, field=f"{jwhere}.type")  # the judge model must be one we can run
        output = ds.reader.output_column
        golds = {k: _gold(ds.test[k], output) for k in todo}
        if mode in ("tot", "attack"):  # search hook: ToTInferencer / AttackInferencer (run/search_plan.py)
            from promptweave.run.search_plan import search_tasks

            tasks += search_tasks(cfg, ds, raw, i, mode, todo, golds, model_ids, specs, make_model, allow_code,
                                  load_data, counters, where)
            continue
        extra: dict[str, Any] = {}
        if mode == "sc":
            extra["sc_size"] = int(settings.get("sc_size", 1))
        if mode == "function_call":  # data hook: BFCL rows carry their own messages and functions
            from promptweave.infer.function_call import check_category

            check_category(raw, file=file, where=f"datasets[{i}]")
            extra["rows"] = {k: ds.test[k] for k in todo} if load_data else {}
            extra["file"] = file
        if mode == "ll":
            extra["cont"] = _conts(ds, todo, f"datasets[{i}]") if load_data else {}
        if mode == "ppl_only" and output is not None:
            raise UnsupportedError("PPLOnlyInferencer scores whole prompts and takes no answer column (as the "
                                   "reference asserts)", file=file, field=f"datasets[{i}].reader_cfg.output_column",
                                   value=output, expected="output_column=None")
        if mode in ("inference_ppl", "sw_ce_loss"):  # eval hook: corpus-loss forms (infer/corpus_forms.py)
            from promptweave.infer.corpus_forms import plan_settings

            extra.update(plan_settings(mode, ds, todo, settings, output, load_data=load_data, file=file,
                                       where=f"datasets[{i}]"))
        build_mode = "gen" if mode in ("gen", "sc", "clp", "function_call", "chat", "agent") else "ppl"  # CLP asks for the next token after the gen prompt
        for j, mspec in zip(model_ids, specs):
            mcfg = mspec.config
            evaluation = build_evaluation(raw.get("eval_cfg"), mode="gen" if mode in ("gen", "sc", "function_call", "chat", "agent") else "ppl",
                                          allow_code=allow_code, where=f"datasets[{i}].eval_cfg",
                                          # eval hook: the test rows for evaluators, the model's postprocessor,
                                          # the dataset dict and names (subjective judges: mode, base_models)
                                          rows=ds.test, model_cfg=mcfg, dataset_cfg=raw, file=file,
                                          names=(ds.abbr, mspec.abbr))
            from promptweave.evaluate.extras import require_task  # extras: refused here, before any model call

            require_task(evaluation, task=f"{ds.abbr} × {mspec.abbr}", file=file, retriever=ds.retriever)
            try:
                check_scoring_model(mode, mcfg, file=file, where=f"models[{j}]")
                from promptweave.infer.local_lm import check_local_lm  # eval hook: corpus-loss forms

                check_local_lm(mode, mcfg, file=file, where=f"models[{j}]")
            except UnsupportedError as exc:  # this pair only: the other tasks still run, this one fails with it
                tasks.append(Task(dataset=ds.abbr, model_name=mspec.abbr, make_model=lambda mcfg=mcfg: make_model(mcfg),
                                  records=[], mode=mode, evaluation=evaluation, settings={"refused": exc}))
                continue
            params = generation_params(mcfg, max_out_len=settings.get("max_out_len"),
                                       stop=settings.get("stopping_criteria"),
                                       generation_kwargs=settings.get("generation_kwargs"))
            if mode == "agent":  # agent helper: AgentInferencer every / every_with_gt, a code agent per chat
                from promptweave.infer.agent import agent_llm

                params = generation_params(agent_llm(mcfg), stop=settings.get("stopping_criteria"),
                                           generation_kwargs=settings.get("generation_kwargs"))
                tasks.append(_agent_task(ds, mspec, todo if load_data else range(0), params, evaluation, golds,
                                         make_model, file, cfg.models[j], f"models[{j}]", where))

                resolve_model_type(agent_llm(mcfg), file=file, field=f"models[{j}].type")
                continue
            if mode == "chat":  # forms: ChatInferencer every / every_with_gt, the row's chat through the turn loop
                tasks.append(_chat_task(ds, mspec, todo if load_data else range(0), params, evaluation, golds,
                                        make_model, file))
                resolve_model_type(mcfg, file=file, field=f"models[{j}].type")
                continue
            budget = prompt_budget(settings.get("max_seq_len"), cfg_get(mcfg, "max_seq_len"), mode=build_mode,
                                   max_out_len=params.max_out_len, where=f"{where}.max_seq_len")
            try:
                builder = PromptBuilder(ds, mspec, build_mode)
                records = _records(builder, ds, todo, load_data, budget, counters, j, mcfg)
            except RoleError as exc:
                raise _role_error(exc, raw, i, j, file) from None
            choices = list(settings.get("choices") or (builder.labels() if mode == "clp" else []))
            tasks.append(Task(
                dataset=ds.abbr, model_name=mspec.abbr, make_model=lambda mcfg=mcfg: make_model(mcfg),
                records=records, mode=mode, params=params, evaluation=evaluation,
                golds=golds if load_data else {}, choices=[str(c) for c in choices],
                normalizing_str=ds.inferencer.normalizing_str,
                # eval hook: the sliding window runs across rows, so its form reads the task's whole corpus
                settings={**extra, "corpus": records} if mode == "sw_ce_loss" else extra,
            ))
            resolve_model_type(mcfg, file=file, field=f"models[{j}].type")  # after the prompts: their errors first
    return tasks
