"""Running a config from Python: the one sequence ``run``, ``spread`` and ``lint`` share.

``evaluate_config(config, options)`` is ``open_run`` (options checked, the environment policy set, the config
loaded, datasets and models selected, API keys checked, the judge chosen) → ``plan_run`` (every dataset × model
planned through its form, evaluators prepared; a dry run marks what would be refused) → ``execute_run`` (references
checked, the tasks executed, resumably) → the HTML report. ``spread`` opens a run the same way and plans each
variant with ``plan_run``'s planner; ``lint`` plans through the same planner. Nothing here prints: what a command
shows comes back in :class:`RunResult`.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.config import Config
from promptweave.config.model_config import ModelConfig, model_config_of
from promptweave.errors import PromptweaveError, warning_text
from promptweave.run.options import RunOptions
from promptweave.work.task import Task, TaskOutcome


@dataclass
class OpenedRun:
    """A loaded config with its selection, ready to plan (what ``open_run`` returns)."""

    config: Config
    options: RunOptions
    datasets: list[int]
    models: list[int]
    judge: Any = None  # the --judge-model config for datasets whose judge_cfg is empty
    model_configs: list[ModelConfig] = field(default_factory=list)  # the selected models' entries, typed

    @property
    def file(self) -> str:
        return str(self.config.path)

    def prepare(self, tasks: list[Task]) -> None:
        """Check every task's evaluation before any model call (code flag and sandbox, judge model)."""
        from promptweave.evaluate import prepare_tasks

        try:
            prepare_tasks(tasks, allow_code_exec=self.options.allow_code_exec, judge_model=self.judge,
                          code_sandbox=self.options.code_sandbox)
        except PromptweaveError as exc:
            raise (exc if exc.file else exc.at(file=self.file)) from None


@dataclass
class RunResult:
    """What a run did: its planned tasks (a dry run stops there), each task's outcome, and what was noticed."""

    run: OpenedRun
    tasks: list[Task] = field(default_factory=list)
    outcomes: list[TaskOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    report: Path | None = None
    report_error: str | None = None  # why no report was written (the run's results are safe on disk)

    @property
    def refused(self) -> list[Task]:
        """Planned tasks that will fail as a whole (each with its ``refused`` error); the others run."""
        return [t for t in self.tasks if t.refused is not None]

    @property
    def ok(self) -> bool:
        """No task failed (and, for a dry run, none would be refused)."""
        return all(o.ok for o in self.outcomes) and not self.refused

    @property
    def complete(self) -> bool:
        """Every row of every task has an answer (a rerun retries the rows that failed)."""
        return all(o.complete for o in self.outcomes)


@contextmanager
def collected_warnings(into: list[str]) -> Iterator[None]:
    """Warnings raised inside (placeholders sent as written, model notes, ...) appended to ``into``, each once."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for msg in dict.fromkeys(warning_text(w.message) for w in caught):
                if msg not in into:
                    into.append(msg)


def apply_policy(options: RunOptions) -> None:
    """The options checked and the user's env allow-list and data paths set: before the config is read (run,
    spread, lint)."""
    from promptweave.data.roots import set_data_policy
    from promptweave.sandbox.env import set_policy

    options.check()
    set_policy(options.allow_env, trusted=options.trust_config)
    set_data_policy(options.allow_data, trusted=options.trust_config)


def select_run(cfg: Config, options: RunOptions) -> tuple[list[int], list[int]]:
    """The selected datasets and models (by abbr), each selected model's entry typed (``ModelConfig``: a wrong field
    is PW181), and the env rule on their API keys checked before planning."""
    from promptweave.config.select import select
    from promptweave.models.factory import check_api_keys

    ds_ids = list(select(cfg.dataset_abbrs(), options.datasets, "dataset", cfg))
    model_ids = list(select(cfg.model_abbrs(), options.models, "model", cfg))
    typed_models(cfg, model_ids)
    check_api_keys(cfg, model_ids, ds_ids)
    return ds_ids, model_ids


def typed_models(cfg: Config, model_ids: Sequence[int]) -> list[ModelConfig]:
    """The selected ``models`` entries as :class:`ModelConfig` (checked at the config boundary)."""
    return [model_config_of(cfg.models[j], file=str(cfg.path), where=f"models[{j}]") for j in model_ids]


def open_run(config: str | Path | Config, options: RunOptions) -> OpenedRun:
    """Options checked, the env policy set (before any read), the config loaded, the selection made, API keys
    checked against the env rule, and the judge chosen; nothing planned or sent yet."""
    from promptweave.config import load_config
    from promptweave.evaluate.judge import judge_model_cfg

    apply_policy(options)
    cfg = config if isinstance(config, Config) else load_config(Path(config), trust=options.trust_config)
    ds_ids, model_ids = select_run(cfg, options)
    return OpenedRun(cfg, options, ds_ids, model_ids, judge_model_cfg(cfg, options.judge_model),
                     typed_models(cfg, model_ids))


def plan_tasks(run: OpenedRun, config: Config | None = None, *, datasets: Sequence[int] | None = None,
               opened: dict[int, Any] | None = None) -> list[Task]:
    """Every selected dataset × model of ``config`` (default: the run's) planned and prepared. ``spread`` calls it
    once per variant with that variant's config and already opened datasets."""
    from promptweave.run.plan import plan_config

    opts = run.options
    tasks = plan_config(config or run.config, limit=opts.limit, allow_code=opts.trust_config,
                        datasets=run.datasets if datasets is None else datasets, models=run.models, opened=opened)
    if opts.dry_run:  # a dry run lists a code-running task without --allow-code-exec as refused, and why
        from promptweave.forms.agent_loop import mark_refused

        mark_refused(tasks, opts.allow_code_exec)
    run.prepare(tasks)
    if opts.dry_run:  # what run refuses before sending (a reference class it cannot import), listed as refused
        from promptweave.compat.bridge import mark_unrunnable

        mark_unrunnable(tasks, file=run.file)
    return tasks


def plan_run(run: OpenedRun) -> list[Task]:
    """The run's tasks (none for a non-dry Ray run: it builds prompts where each shard runs)."""
    if run.options.executor != "local" and not run.options.dry_run:
        return []
    return plan_tasks(run)


def check_before_sending(run: OpenedRun, tasks: Sequence[Task]) -> None:
    """A reference class read from an unimportable package cannot score: said before anything is sent."""
    from promptweave.compat.bridge import check_runnable

    check_runnable(tasks, file=run.file)


def execute_run(run: OpenedRun, tasks: list[Task], *, console: Any = None,
                notify: Callable[[str], None] | None = None) -> list[TaskOutcome]:
    """Execute the planned tasks (or, for Ray, the request), resumably, into the work dir."""
    opts = run.options
    if opts.executor == "local":
        from promptweave.run.execute import run_tasks

        return run_tasks(tasks, opts.workdir, show_progress=opts.show_progress, console=console,
                         on_row_error=opts.on_row_error, wait=opts.wait, notify=notify)
    from promptweave.run.executors import RunRequest, make_executor

    runner = make_executor(opts.executor, **opts.executor_options())
    return runner.run(RunRequest(run.config, opts.workdir, run.datasets, run.models, opts.limit, opts.trust_config,
                                 show_progress=opts.show_progress, console=console, prepare=run.prepare,
                                 on_row_error=opts.on_row_error, wait=opts.wait, notify=notify))


def write_run_report(result: RunResult) -> None:
    """``WORKDIR/report.html``; a report problem is recorded, never raised (the results are on disk)."""
    from promptweave.report.page import write_report

    workdir = result.run.options.workdir
    try:
        result.report = write_report([workdir], Path(workdir) / "report.html")
    except Exception as exc:  # noqa: BLE001 - the run's results are safe on disk; a report problem must not fail it
        result.report_error = f"{type(exc).__name__}: {exc}"


def evaluate_config(config: str | Path | Config, options: RunOptions | None = None, *, console: Any = None,
                    notify: Callable[[str], None] | None = None,
                    on_plan: Callable[[RunResult], None] | None = None) -> RunResult:
    """Run a config (a file or a loaded :class:`Config`): every selected dataset × model, scored, written to
    ``options.workdir``; rerunning resumes. A dry run plans and checks only.

    Bad input raises a :class:`PromptweaveError` (one line naming file, field and value) before anything is sent; a
    task that fails is an outcome, not an exception. ``console`` shows progress bars (a ``rich`` console);
    ``notify`` is told when the run waits for another one's lock; ``on_plan`` sees the planned result (its tasks and
    warnings) before anything runs.
    """
    options = options or RunOptions()
    if options.mode == "perf" and not options.dry_run:
        from promptweave.errors import RunOptionsError

        raise RunOptionsError("evaluate_config scores answers; measure serving performance with "
                              "promptweave.run.perf.run_perf (run --mode perf)", field="--mode", value="perf")
    noticed: list[str] = []
    with collected_warnings(noticed):
        run = open_run(config, options)
        tasks = plan_run(run)
    result = RunResult(run, tasks, warnings=noticed)
    if on_plan is not None:
        on_plan(result)
    if options.dry_run:
        return result
    check_before_sending(run, tasks)
    result.outcomes = execute_run(run, tasks, console=console, notify=notify)
    if options.report:
        write_run_report(result)
    return result


__all__ = ["OpenedRun", "RunOptions", "RunResult", "apply_policy", "check_before_sending", "collected_warnings", "evaluate_config",
           "execute_run", "open_run", "plan_run", "plan_tasks", "select_run", "typed_models", "write_run_report"]
