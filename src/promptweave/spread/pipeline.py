"""Running a spread from Python: ``run``'s own sequence (``run.pipeline.open_run``: options, env policy, config,
selection, API keys, judge) plus the variant stage, then each variant planned, checked and executed as ``run``
does, the figures and the report."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.config import Config
from promptweave.errors import ConfigError
from promptweave.run.options import RunOptions
from promptweave.run.pipeline import OpenedRun, check_before_sending, open_run
from promptweave.spread.execute import SpreadRequest, plan_tasks, plan_variants, run_search, run_spread
from promptweave.spread.variants import Variant
from promptweave.work.task import Task, TaskOutcome

SEARCHES = ("extremes",)


@dataclass
class SpreadOptions:
    """What ``spread`` adds to a run's options: how many variants, which, and whether to search."""

    n: int = 16
    seed: int = 0
    search: str | None = None
    budget: int | None = None

    def check(self, options: RunOptions) -> None:
        if self.search not in (None, *SEARCHES):
            raise ConfigError("unknown search", field="--search", value=self.search, expected="extremes")
        if self.search and self.budget is None:
            raise ConfigError("--search extremes needs a call budget", field="--budget",
                              expected="--budget CALLS (model calls per dataset × model)")
        if self.budget is not None and not self.search:
            raise ConfigError("--budget applies to --search extremes", field="--budget", value=self.budget,
                              expected="--search extremes --budget CALLS")
        if self.search and options.executor != "local":
            raise ConfigError("--search extremes runs in this process (it decides each next row from the last "
                              "answers)", field="--executor", value=options.executor, expected="local")


@dataclass
class SpreadResult:
    """A spread's variants, its planned tasks (dry run), ``spread.json``'s content and each variant's outcomes."""

    run: OpenedRun
    variants: dict[int, list[Variant]] = field(default_factory=dict)
    planned: dict[int, list[Task]] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    outcomes: dict[int, list[TaskOutcome]] = field(default_factory=dict)
    report: Path | None = None
    report_error: str | None = None

    @property
    def failed(self) -> list[TaskOutcome]:
        return [o for outs in self.outcomes.values() for o in outs if not o.ok]

    @property
    def complete(self) -> bool:
        return all(o.complete for outs in self.outcomes.values() for o in outs)


def spread_request(run: OpenedRun, spread: SpreadOptions, *, console: Any = None,
                   notify: Callable[[str], None] | None = None) -> SpreadRequest:
    """The spread of an opened run: its selection and options; each variant's tasks prepared as ``run`` prepares
    them and, unless it is a dry run, checked before anything is sent."""
    opts = run.options

    def prepare(tasks: list[Task]) -> None:
        run.prepare(tasks)
        if not opts.dry_run:
            check_before_sending(run, tasks)

    return SpreadRequest(run.config, opts.workdir, run.datasets, run.models, n=spread.n, seed=spread.seed,
                         limit=opts.limit, allow_code=opts.trust_config, on_row_error=opts.on_row_error,
                         show_progress=opts.show_progress, console=console, prepare=prepare, wait=opts.wait,
                         notify=notify, executor=opts.executor, executor_options=opts.executor_options())


def spread_config(config: str | Path | Config, options: RunOptions | None = None,
                  spread: SpreadOptions | None = None, *, console: Any = None,
                  notify: Callable[[str], None] | None = None) -> SpreadResult:
    """N format variants of each dataset's template run (or, with ``search``, searched) as ordinary tasks into
    ``options.workdir``; ``spread.json`` holds the figures. A dry run plans every variant and sends nothing."""
    options, spread = options or RunOptions(), spread or SpreadOptions()
    spread.check(options)
    run = open_run(config, options)
    req = spread_request(run, spread, console=console, notify=notify)
    result = SpreadResult(run)
    if options.dry_run:
        result.variants = plan_variants(req)
        result.planned = plan_tasks(req, result.variants)
        return result
    if spread.search:
        result.data = run_search(req, spread.budget or 0)
        return result
    result.data, result.outcomes = run_spread(req)
    if options.report:  # the spread page and each variant's report; a report problem never fails the spread
        from promptweave.report.spread_page import write_spread_report

        try:
            result.report = write_spread_report(options.workdir)
        except Exception as exc:  # noqa: BLE001 - the figures are safe on disk
            result.report_error = f"{type(exc).__name__}: {exc}"
    return result


__all__ = ["SEARCHES", "SpreadOptions", "SpreadResult", "spread_config", "spread_request"]
