"""The one protocol every inference form follows, and what most forms share.

A form is how a dataset's prompts are used (one generation, a perplexity per label, a conversation, a search ...).
Its module holds one :class:`Form` (``FORM``), reached only through ``forms/registry.py``. The runner asks it, in
turn, to:

- **plan** (``plan``): check its settings and each model (typed refusals, at plan time) and make each dataset ×
  model's :class:`~promptweave.work.task.Task` (the records, conversations or samples it will run). The default
  builds the rows' prompts from the dataset's templates; hooks (``dataset_settings``, ``check_model``, ``params``,
  ``model_task``, ``task_settings``) change one step each;
- **run** (``rows``): turn one batch of records into prediction rows through the model's few primitives (generate,
  log-likelihood / perplexity, next-token probabilities, tool calls), the response cache in between; or the whole
  task at once (``run_task``) when it writes files of its own or scores as it goes; ``infer_rows`` /
  ``score_rows`` do the same split across workers (the Ray executor);
- **score**: the rows go to the run's ordinary scoring (the evaluation built at plan time), unless ``score_rows``
  scores them itself;
- **show** (``view_turns`` / ``view_dataset``): what ``promptweave view`` shows for a row.

``run/plan.py``, ``run/execute.py``, ``cli/view.py``, ``run/lint.py`` and the executors call these and nothing else,
so they know no form by name.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from promptweave.errors import ConfigError, ModelError, PromptweaveError, RoleError, UnsupportedError
from promptweave.evaluate import build_evaluation
from promptweave.evaluate.extras import require_task
from promptweave.models.factory import cfg_get, generation_params
from promptweave.work.out_len import model_max_out_len
from promptweave.work.records import prompt_budget, role_error, task_records
from promptweave.work.task import Task
from promptweave.work.verdicts import check_chat_template


def require_backend(mcfg: Any, *, task: str, file: str | None, where: str) -> None:
    """Before any model call: the model backend's optional packages (transformers, vllm) are installed, or one
    typed error names the task and the extra; a type that does not resolve is refused by its own check."""
    from promptweave.compat.models import MODEL_TYPES, type_name
    from promptweave.extras import require

    if cfg_get(mcfg, "_lint_stand_in"):  # lint's own stand-in for a dataset-only file: never loaded, needs nothing
        return
    name = type_name(cfg_get(mcfg, "type"))
    mt = MODEL_TYPES.get(name)
    if mt is not None:
        require([mt], task=task, who=f"the {name} model", file=file, field=f"{where}.type", value=name)


# eval_cfg keys read by the run (multi-turn scoring), not by the evaluation itself
SCORE_KEYS = {"score_per": ("turn", "conversation"), "conversation_reduce": ("all", "mean")}


@dataclass
class DatasetPlan:
    """One dataset of a config being planned, for every selected model: what a form's ``plan`` reads."""

    cfg: Any
    ds: Any  # the opened DatasetSpec (or its stand-in without data)
    raw: Any  # the dataset's config dict
    i: int
    file: str
    where: str  # datasets[i].infer_cfg.inferencer
    n: int  # rows in the run (the limit applied)
    todo: range  # the rows to build (one shard's, for the Ray executor)
    rows: range | None  # the shard asked for, if any
    model_ids: Sequence[int]
    specs: Sequence[Any]
    make_model: Callable[[Any], Any]
    allow_code: bool
    load_data: bool
    counters: Any  # work.records.Counters
    tokenizer_checks: dict = field(default_factory=dict)  # work.verdicts.check_chat_template's per-model cache
    output: str | None = None
    golds: dict = field(default_factory=dict)

    @property
    def settings(self) -> Mapping[str, Any]:
        return self.ds.inferencer.settings


def score_settings(eval_cfg: Any, *, multiturn: bool, where: str) -> tuple[dict, dict[str, str]]:
    """``eval_cfg`` without the multi-turn scoring keys, and those keys' values (checked)."""
    if eval_cfg is not None and not isinstance(eval_cfg, Mapping):
        raise ConfigError("eval_cfg must be a dict", field=where, value=eval_cfg,
                          expected="dict(evaluator=dict(type=...), pred_postprocessor=...)")
    cfg = dict(eval_cfg or {})
    got: dict[str, str] = {}
    for key, allowed in SCORE_KEYS.items():
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


def judge_models(obj: Any, path: str) -> list[tuple[str, Any]]:
    """Every ``judge_cfg`` with a model ``type`` inside an ``eval_cfg`` (LLM-as-judge evaluators, nested ones too)."""
    out: list[tuple[str, Any]] = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            sub = f"{path}.{k}"
            if k == "judge_cfg" and isinstance(v, Mapping) and v.get("type") is not None:
                out.append((sub, v))
            else:
                out += judge_models(v, sub)
    elif isinstance(obj, (list, tuple)):
        for n, v in enumerate(obj):
            out += judge_models(v, f"{path}[{n}]")
    return out


def gold_of(row: Any, column: str | None) -> Any:
    if column is None:
        return None
    if type(row) is dict or isinstance(row, Mapping):  # perf (spread plans a task per variant): no ABC check
        return row.get(column)
    return getattr(row, column, None)


def check_logprobs_model(form: str, mcfg: Any, *, file: str | None, where: str) -> None:
    """Perplexity-type scoring needs per-token log-probs of the prompt, which a chat endpoint cannot give."""
    from promptweave.compat.models import MODEL_TYPES, type_name

    mt = MODEL_TYPES.get(type_name(cfg_get(mcfg, "type")))
    kind = cfg_get(mcfg, "kind") or (mt.kind if mt else None)
    if mt is not None and mt.backend == "openai" and kind == "api":
        raise UnsupportedError(
            f"{form} scoring needs the log-probability of every prompt token, which a chat API does not return",
            file=file, field=f"{where}.kind", value=kind,
            expected="kind='lm' on an OpenAI-compatible /completions endpoint that returns prompt logprobs "
                     "(echo, e.g. vLLM), or a local model (HuggingFaceBaseModel, VLLM)")


class Form:
    """An inference form. Subclasses set the class attributes and override the hooks they need."""

    name: str = ""
    """The form's name (``Task.mode``), as ``compat/inferencers.py`` maps the references' inferencers to it."""
    build_mode: str = "gen"
    """Prompts built as for generation (``gen``: up to the generating turn) or for scoring (``ppl``: whole)."""
    eval_mode: str = "gen"
    """The evaluation's default when ``eval_cfg`` names no evaluator (``gen``: accuracy; ``ppl``: label accuracy)."""
    scoring: bool = False
    """Needs the log-probability of every prompt token: refused on a chat API, linted against a plain LM only."""
    stand_ins: tuple[str, ...] = ("lm", "api")
    """The kinds of stand-in model ``lint`` checks a shipped dataset config against."""
    columnar: bool = False
    """``rows`` reads a compiled chunk by its columns (no record objects): the run gives it ``gold`` by index."""
    labels_per_row: bool = False
    """A row is one record per label (the Ray executor sizes its shards by them)."""
    shared_index: bool = True
    """The Ray executor may share the dataset's retriever index across workers (records come from the builder)."""
    choices_from_labels: bool = False
    """With no ``choices`` setting, the task's choices are the template's labels."""
    prompt_cut: str = ""
    """How a local model with ``max_seq_len`` cuts an over-long prompt of this form, which the run records per row
    (``run/truncation.py``): ``"output"`` keeps ``max_seq_len - max_out_len`` tokens (generation), ``"whole"``
    keeps ``max_seq_len``, ``""`` never cuts (scored prompts are refused, not cut)."""

    # -- plan ------------------------------------------------------------------------------------------------------
    def plan(self, p: DatasetPlan) -> list[Task]:
        """Every selected model's task for one dataset."""
        score_settings(p.raw.get("eval_cfg"), multiturn=False, where=f"datasets[{p.i}].eval_cfg")
        from promptweave.compat.models import resolve_model_type

        for jwhere, jcfg in judge_models(p.raw.get("eval_cfg"), f"datasets[{p.i}].eval_cfg"):
            resolve_model_type(jcfg, file=p.file, field=f"{jwhere}.type")  # the judge model must be one we can run
            require_backend(jcfg, task=f"{p.ds.abbr} (judge)", file=p.file, where=jwhere)
        p.output = p.ds.reader.output_column
        p.golds = {k: gold_of(p.ds.test[k], p.output) for k in p.todo}
        return self.plan_models(p)

    def plan_models(self, p: DatasetPlan) -> list[Task]:
        from promptweave.compat.models import resolve_model_type

        extra = self.dataset_settings(p)
        tasks: list[Task] = []
        for j, mspec in zip(p.model_ids, p.specs):
            mcfg = mspec.config
            evaluation = build_evaluation(p.raw.get("eval_cfg"), mode=self.eval_mode, allow_code=p.allow_code,
                                          where=f"datasets[{p.i}].eval_cfg",
                                          # the test rows for evaluators, the model's postprocessor, the dataset
                                          # dict and names (subjective judges: mode, base_models)
                                          rows=p.ds.test, model_cfg=mcfg, dataset_cfg=p.raw, file=p.file,
                                          names=(p.ds.abbr, mspec.abbr))
            # extras: a package the task needs is refused here, before any model call
            require_task(evaluation, task=f"{p.ds.abbr} × {mspec.abbr}", file=p.file, retriever=p.ds.retriever,
                         retriever_where=f"datasets[{p.i}].infer_cfg.retriever")
            require_backend(self.model_type_cfg(mcfg), task=f"{p.ds.abbr} × {mspec.abbr}", file=p.file,
                            where=f"models[{j}]")
            try:
                self.check_model(mcfg, file=p.file, where=f"models[{j}]")
                # the checks lint, --dry-run and run share: a chat-template model's tokenizer has a template
                check_chat_template(self.build_mode, mcfg, file=p.file, where=f"models[{j}]",
                                    seen=p.tokenizer_checks)
            except (UnsupportedError, ModelError) as exc:  # this pair only: the other tasks still run, this one fails with it
                tasks.append(Task(dataset=p.ds.abbr, model_name=mspec.abbr,
                                  make_model=partial(p.make_model, mcfg),
                                  records=[], mode=self.name, evaluation=evaluation, refused=exc))
                continue
            params = self.params(mcfg, p.settings)
            tasks.append(self.model_task(p, j, mspec, params, evaluation, extra))
            # after the prompts: their errors first
            resolve_model_type(self.model_type_cfg(mcfg), file=p.file, field=f"models[{j}].type")
        return tasks

    def dataset_settings(self, p: DatasetPlan) -> dict[str, Any]:
        """What the form needs of the dataset beyond prompts (checked here), kept in each task's ``settings``."""
        return {}

    def check_model(self, mcfg: Any, *, file: str | None, where: str) -> None:
        """Refuse (``UnsupportedError``) a model this form cannot run on; the pair then fails alone."""
        if self.scoring:
            check_logprobs_model(self.name, mcfg, file=file, where=where)

    def params(self, mcfg: Any, settings: Mapping[str, Any]) -> Any:
        # AISBench's service models ask for the model's max_out_len whatever the inferencer says (work/out_len.py)
        return generation_params(mcfg, max_out_len=model_max_out_len(mcfg) or settings.get("max_out_len"),
                                 stop=settings.get("stopping_criteria"),
                                 generation_kwargs=settings.get("generation_kwargs"))

    def model_type_cfg(self, mcfg: Any) -> Any:
        """The model config whose ``type`` must resolve (an agent's: its llm's)."""
        return mcfg

    def model_task(self, p: DatasetPlan, j: int, mspec: Any, params: Any, evaluation: Any,
                   extra: dict[str, Any]) -> Task:
        """One model's task: the rows' prompts from the dataset's templates, fitted to the prompt budget."""
        from promptweave.engine import PromptBuilder

        mcfg = mspec.config
        settings = p.settings
        budget = prompt_budget(settings.get("max_seq_len"), cfg_get(mcfg, "max_seq_len"), mode=self.build_mode,
                               max_out_len=params.max_out_len, where=f"{p.where}.max_seq_len")
        try:
            builder = PromptBuilder(p.ds, mspec, self.build_mode)
            records = task_records(builder, p.ds, p.todo, p.load_data, budget, p.counters, j, mcfg)
        except RoleError as exc:
            raise role_error(exc, p.raw, p.i, j, p.file) from None
        choices = list(settings.get("choices") or (builder.labels() if self.choices_from_labels else []))
        return Task(dataset=p.ds.abbr, model_name=mspec.abbr, make_model=partial(p.make_model, mcfg),
                    records=records, mode=self.name, params=params, evaluation=evaluation,
                    golds=p.golds if p.load_data else {}, choices=[str(c) for c in choices],
                    normalizing_str=p.ds.inferencer.normalizing_str, settings=self.task_settings(extra, records))

    def task_settings(self, extra: dict[str, Any], records: Any) -> dict[str, Any]:
        return extra

    # -- run -------------------------------------------------------------------------------------------------------
    def rows(self, task: Task, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        """Prediction rows of one batch of records (a failed request's row carries ``error``)."""
        raise PromptweaveError("unknown inference mode", field="mode", value=self.name,
                               expected="a form that runs in batches (this one runs whole tasks)")

    def run_task(self, task: Task, model: Any, cache: Any, progress: Callable[[int], None] | None, ppath: Path,
                 workdir: Path, on_row_error: str) -> tuple[dict[str, Any], int] | None:
        """Run the whole task and write its predictions (the result's fields and its row count), or None to have
        the run stream its batches through ``rows`` and score them."""
        return None

    def infer_rows(self, task: Task, model: Any, cache: Any,
                   progress: Callable[[int], None] | None) -> tuple[list[dict[str, Any]], dict] | None:
        """A row range's unscored rows and what ``score_rows`` needs besides them, or None for batches of ``rows``."""
        return None

    def empty_meta(self, task: Task) -> dict | None:
        """The ``meta`` of a task whose rows came back without one (no shard ran), or None."""
        return None

    def score_rows(self, task: Task, rows: list[dict[str, Any]], meta: dict) -> dict[str, Any]:
        """Score the merged rows of ``infer_rows`` (the result's fields)."""
        raise PromptweaveError("this form's rows are scored by the run", field="mode", value=self.name)

    # -- lint / view -----------------------------------------------------------------------------------------------
    def count_prompts(self, task: Task, cfg: Any, opened: dict, no_data: bool) -> int:
        """How many prompts ``lint`` reports for the task."""
        return len(task.records)

    def view_turns(self, spec: Any, model: Any) -> Any:
        """For ``view``: an inferencer giving the row's prompts turn by turn (``turn_prompts(index)``), or None."""
        return None

    def view_dataset(self, spec: Any) -> tuple[Any, str | None]:
        """For ``view``: the dataset as shown (and a note), e.g. with the first of several prompts filled in."""
        return spec, None
