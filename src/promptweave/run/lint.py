"""Linting configs: everything ``run`` checks before it sends a request, through the same planning code.

Each config file is loaded and planned dataset × model (``run.plan.plan_config``): templates, meta templates and
roles, inferencer forms and their settings, the evaluators and postprocessors of ``eval_cfg`` (judge models
included), model types, placeholders against the columns, and every prompt. ``--no-data`` checks all but the rows
(one prompt from a stand-in row per pair), for sweeping a config tree without its data. A dataset config as
shipped (``<name>_datasets`` lists and no ``models``) is checked against two stand-in models: a plain LM with no
meta template and a chat API with the meta template OpenCompass gives chat models (scoring forms only against the LM).
"""
from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.compat.models import CHAT_TEMPLATE_META
from promptweave.errors import warning_text
from promptweave.run.options import RunOptions

# the API stand-in uses the meta template OpenCompass gives its chat models (``...withChatTemplate``): the reference's
# chat-era dataset configs put SYSTEM turns inside rounds, which such a template places
STAND_IN_MODELS = [
    {"abbr": "plain-lm", "type": "HuggingFaceBaseModel", "path": "(lint stand-in)", "_lint_stand_in": True},
    {"abbr": "api-chat", "type": "OpenAISDK", "path": "(lint stand-in)", "openai_api_base": "http://127.0.0.1/v1",
     "_lint_stand_in": True, "meta_template": CHAT_TEMPLATE_META},
]
_STAND_IN_KIND = {"plain-lm": "lm", "api-chat": "api"}  # each stand-in model's kind (a form's ``stand_ins``)


@dataclass
class LintReport:
    """What linting one config file found."""

    path: str
    problems: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # per dataset × model, for the detailed view
    warnings: list[str] = field(default_factory=list)
    datasets: int = 0
    models: int = 0
    prompts: int = 0
    dataset_file: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, exc: Any, prefix: str = "") -> None:
        self.problems.append(f"{prefix}{exc}")
        self.codes.append(str(getattr(exc, "code", "PW000")))


def _dataset_lists(variables: dict) -> list[dict]:
    """``<name>_datasets`` lists of a dataset config, in definition order, each dataset once."""
    out: list[dict] = []
    seen: set[int] = set()
    for name, value in variables.items():
        if not (name.endswith("_datasets") or name == "datasets") or not isinstance(value, (list, tuple)):
            continue
        for d in value:
            if isinstance(d, dict) and id(d) not in seen and "infer_cfg" in d:
                seen.add(id(d))
                out.append(d)
    return out


def _read_variables(path: Path, trust: bool) -> dict:
    if path.suffix.lower() != ".py":
        return {}
    if trust:
        from promptweave.config.trusted_py import run_py_config

        return dict(run_py_config(path))
    from promptweave.config.safe_py import load_py_config

    variables, _env = load_py_config(path)
    return dict(variables)


def load_for_lint(path: Path, *, trust: bool = False) -> tuple[Any, bool]:
    """The config, and whether it is a dataset config given stand-in models."""
    from promptweave.config import load_config
    from promptweave.config.loader import Config, normalise
    from promptweave.errors import ConfigError

    try:
        cfg = load_config(path, trust=trust)
    except ConfigError as exc:
        if "neither 'datasets' nor 'models'" not in exc.message:
            raise
        datasets = _dataset_lists(_read_variables(path, trust))
        if not datasets:
            raise ConfigError("the config defines no datasets (neither 'datasets' nor '<name>_datasets' lists) and "
                              "no models", file=str(path),
                              expected="datasets = [...] and models = [...], or a dataset config's <name>_datasets")
        return Config(path, [normalise(d) for d in datasets], [dict(m) for m in STAND_IN_MODELS]), True
    if cfg.datasets and not cfg.models:
        cfg.models = [dict(m) for m in STAND_IN_MODELS]
        return cfg, True
    return cfg, False


def _no_stand_in_tokenizer(mcfg: Any) -> Any:
    from promptweave.models.factory import load_token_counter

    if isinstance(mcfg, dict) and mcfg.get("_lint_stand_in"):
        return None
    return load_token_counter(mcfg)


def _form(raw: dict, file: str, i: int) -> Any:
    """The dataset's form (``forms/registry.py``), or None when its inferencer is not one we run."""
    from promptweave.compat.inferencers import INFERENCERS, inferencer_name
    from promptweave.forms.registry import form_for

    inf = (raw.get("infer_cfg") or {}).get("inferencer") if isinstance(raw.get("infer_cfg"), dict) else None
    name = inferencer_name(inf.get("type") if isinstance(inf, dict) else None)
    form = INFERENCERS.get(name)
    return form_for(form.mode) if form else None


def lint_file(path: str | Path, *, no_data: bool = False, trust: bool = False, limit: int | None = None,
              datasets: Sequence[str] | None = None, models: Sequence[str] | None = None,
              options: RunOptions | None = None) -> LintReport:
    """Plan every dataset × model of one config file as ``run`` would, without calling a model.

    ``options`` (``lint``'s flags, the ones ``run`` has) replace ``trust``, ``limit``, ``datasets`` and ``models``
    and set the env policy first, as ``run`` does; without them the policy in force is kept.
    """
    from promptweave.errors import PromptweaveError
    from promptweave.run.pipeline import apply_policy, select_run
    from promptweave.run.plan import plan_config

    policy = options is not None
    if options is None:
        options = RunOptions(trust_config=trust, limit=limit, datasets=None if datasets is None else list(datasets),
                             models=None if models is None else list(models))
    trust, limit = options.trust_config, options.limit
    path = Path(path)
    report = LintReport(str(path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if policy:
                apply_policy(options)  # the user's env allow-list, before any read
            cfg, dataset_file = load_for_lint(path, trust=trust)
            ds_ids, model_ids = select_run(cfg, options)  # run's selection and its env rule on API keys
        except PromptweaveError as exc:
            report.add(exc)
            return report
        except RecursionError:
            from promptweave.errors import ConfigError

            report.add(ConfigError("the config nests too deeply to read", file=str(path)))
            return report
        except Exception as exc:  # noqa: BLE001 - one line per file, whatever went wrong (a bug: see _internal)
            report.add(_internal(exc, path))
            return report
        report.dataset_file = dataset_file
        report.datasets, report.models = len(ds_ids), len(model_ids)
        _list_data(report, cfg, ds_ids, no_data)
        try:
            judge = _judge(cfg, options, dataset_file)
        except PromptweaveError as exc:
            report.add(exc if exc.file else exc.at(file=str(path)))
            return report
        opened: dict[int, Any] = {}
        abbrs_d, abbrs_m = cfg.dataset_abbrs(), cfg.model_abbrs()
        try:
            from promptweave.config.pairs import allowed_pairs

            allowed = allowed_pairs(cfg)  # model_dataset_combinations: only the pairs run would plan
        except PromptweaveError as exc:
            report.add(exc)
            return report
        for i in ds_ids:
            form = _form(cfg.datasets[i], str(path), i)
            said: set[str] = set()
            for j in model_ids:
                if allowed is not None and (i, j) not in allowed:
                    continue
                if (dataset_file and form is not None
                        and _STAND_IN_KIND.get(cfg.models[j]["abbr"], "") not in form.stand_ins):
                    continue  # scoring needs token log-probs (the plain LM only); tools need the API model
                start = time.perf_counter()
                pair = f"{abbrs_d[i]} × {abbrs_m[j]}"
                try:
                    tasks = plan_config(cfg, limit=limit, allow_code=trust, datasets=[i], models=[j],
                                        load_data=not no_data, opened=opened, token_counter=_no_stand_in_tokenizer)
                    _check_as_run(tasks, options, judge, str(path))
                    from promptweave.compat.bridge import check_runnable

                    check_runnable(tasks, file=str(path))  # what run refuses before sending, lint refuses too
                    if no_data:  # with data, planning has read the rows already
                        from promptweave.run.plan import check_loader_runnable

                        check_loader_runnable(cfg.datasets[i], file=str(path), where=f"datasets[{i}]")
                    count = _count_prompts(tasks, cfg, opened, no_data)
                except PromptweaveError as exc:
                    if str(exc) in said:
                        continue  # the same fault under another model (the dataset's own): said once
                    said.add(str(exc))
                    report.add(exc, prefix=f"{pair}: ")
                    if i not in opened:
                        break  # the dataset itself is at fault: one report, not one per model
                    continue
                except RecursionError:
                    from promptweave.errors import ConfigError

                    report.add(ConfigError("a value nests too deeply", file=str(path)), prefix=f"{pair}: ")
                    continue
                except Exception as exc:  # noqa: BLE001 - reported as an internal error, never a traceback
                    report.add(_internal(exc, path), prefix=f"{pair}: ")
                    continue
                report.prompts += count
                took = time.perf_counter() - start
                if no_data:
                    report.lines.append(f"ok: {pair}: {count} prompt(s) from a stand-in row (no data)")
                else:
                    rows = len(opened[i].test) if i in opened else 0
                    rows = rows if limit is None else min(limit, rows)
                    report.lines.append(f"ok: {pair}: {count} prompts from {rows} rows in {took:.2f}s")
    seen: dict[str, None] = {}
    for w in caught:
        seen.setdefault(warning_text(w.message), None)
    report.warnings = list(seen)
    return report


def _list_data(report: LintReport, cfg: Any, ds_ids: Sequence[int], no_data: bool) -> None:
    """Every data source the selected datasets read (path, present or not); with ``--no-data`` a source outside
    the data roots is a problem here, as loading it would be (``data/roots.py``)."""
    from promptweave.data.listing import config_sources
    from promptweave.data.roots import data_roots

    for i, src in config_sources(cfg, ds_ids):
        report.lines.append(src.line())
        if no_data and not src.allowed:
            report.add(src.refusal(data_roots(cfg.base_dir)).at(file=str(cfg.path), prefix=f"datasets[{i}]"))


def _judge(cfg: Any, options: RunOptions, dataset_file: bool) -> Any:
    """The judge run would use (``--judge-model``, else the config's ``judge_models``); a dataset config's judge is
    the API stand-in, as its models are."""
    from promptweave.evaluate.judge import judge_model_cfg

    judge = judge_model_cfg(cfg, options.judge_model)
    return STAND_IN_MODELS[1] if judge is None and dataset_file else judge


def _check_as_run(tasks: Sequence[Any], options: RunOptions, judge: Any, file: str) -> None:
    """The checks ``run --dry-run`` makes after planning, with the same flags: a task refused at planning, code that
    runs only with ``--allow-code-exec`` (and in a sandbox that works here), a judge, what an evaluator lacks."""
    from promptweave.errors import PromptweaveError
    from promptweave.evaluate import prepare_tasks
    from promptweave.forms.agent_loop import mark_refused

    mark_refused(tasks, options.allow_code_exec)
    for t in tasks:
        if t.refused is not None:
            raise t.refused
    try:
        prepare_tasks(tasks, allow_code_exec=options.allow_code_exec, judge_model=judge, check_only=True,
                      code_sandbox=options.code_sandbox)
    except PromptweaveError as exc:
        raise (exc if exc.file else exc.at(file=file)) from None


def _internal(exc: Exception, path: Path) -> Any:
    """An unexpected exception (a promptweave bug) as a typed line that says so."""
    from promptweave.errors import PromptweaveError

    return PromptweaveError(f"internal error {type(exc).__name__}: {exc}; please report it with this config",
                            file=str(path))


def _count_prompts(tasks: Sequence[Any], cfg: Any, opened: dict, no_data: bool) -> int:
    from promptweave.forms.registry import form_for

    return sum(form_for(t.mode).count_prompts(t, cfg, opened, no_data) for t in tasks)


def summary_line(report: LintReport, *, detail: bool = False) -> str:
    """One line for a file: ``ok: FILE: ...`` or ``error: <first problem>`` (and how many more).

    After the detailed lines (which show every problem) it only counts them.
    """
    if detail and not report.ok:
        return f"error: {report.path}: {len(report.problems)} problem(s)"
    if report.ok:
        what = "dataset config, stand-in models" if report.dataset_file else f"{report.models} model(s)"
        return f"ok: {report.path}: {report.datasets} dataset(s) × {what}, {report.prompts} prompt(s)"
    more = f" (+{len(report.problems) - 1} more)" if len(report.problems) > 1 else ""
    first = report.problems[0]
    return f"error: {first if report.path in first else report.path + ': ' + first}{more}"


