"""``promptweave run CONFIG -w WORKDIR``: evaluate every dataset × model, resumably (``run.pipeline``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from promptweave.cli.app import app
from promptweave.cli.options import run_options
from promptweave.run.options import RunOptions


@app.command("run")
@run_options("select", "policy", "scoring", "execute", "mode")
def run_cmd(config: Path = typer.Argument(..., help="Config file (.py, .yaml or .json)."), *,
            opts: RunOptions) -> None:
    """Send each dataset's prompts to each model, score the answers, write predictions and results."""
    from rich.console import Console

    from promptweave.cli.common import ExitCode, fail, print_warnings
    from promptweave.errors import PromptweaveError
    from promptweave.run.pipeline import evaluate_config

    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    if opts.mode == "perf" and not opts.dry_run:  # perf hook: serving performance (run/perf/), one library call
        from promptweave.cli.perf import run_perf_mode

        return run_perf_mode(config, opts, console, err)

    def planned(result: Any) -> None:
        print_warnings(err, result.warnings)
        if opts.dry_run:
            show_plan(console, err, result)

    try:
        result = evaluate_config(config, opts, console=console, on_plan=planned,
                                 notify=lambda msg: err.print(msg, style="yellow", markup=False))
    except PromptweaveError as exc:
        fail(err, exc)
    except KeyboardInterrupt:
        interrupted(err, opts.workdir)
    if opts.dry_run:
        if result.refused:  # the same verdict lint gives: this plan cannot run as a whole
            raise typer.Exit(ExitCode.WILL_FAIL)
        return
    show_outcomes(console, err, result)
    if opts.report:
        show_report(console, err, result)
    # failed tasks, then failed rows or conversations: a rerun retries them
    if not all(o.ok for o in result.outcomes):
        raise typer.Exit(ExitCode.FAILURES)
    if not result.complete:
        raise typer.Exit(ExitCode.FAILED_ROWS)


def interrupted(err: Any, workdir: Path) -> None:
    """Ctrl-C: what is kept and how to go on; exit 130."""
    from promptweave.cli.common import ExitCode
    from promptweave.infer.cache import stored_answers
    from promptweave.run.execute import CACHE_FILE

    kept = stored_answers(Path(workdir) / CACHE_FILE)
    err.print(f"interrupted: {kept} answer(s) are kept in {Path(workdir) / CACHE_FILE}; rerun the same command to "
              "resume (only what is missing is sent)", style="yellow", markup=False, soft_wrap=True)
    raise typer.Exit(ExitCode.INTERRUPTED)


def show_plan(console: Any, err: Any, result: Any) -> None:
    """A dry run: the tasks, the estimate, how local models batch, what will fail, which env variables were read."""
    from rich.table import Table

    from promptweave.cli.common import fail
    from promptweave.errors import PromptweaveError
    from promptweave.models.factory import batching_note
    from promptweave.run.estimate import show_estimate
    from promptweave.sandbox.env import env_reads

    tasks, cfg = result.tasks, result.run.config
    table = Table(title=f"plan: {len(tasks)} task(s); nothing sent")
    for col in ("dataset", "model", "mode", "rows", "calls"):
        table.add_column(col)
    for t in tasks:
        table.add_row(t.dataset, t.model_name, t.mode, "-" if t.refused else str(t.rows),
                      f"refused ({t.refused.code})" if t.refused else str(t.calls))
    console.print(table)
    try:  # requests, prompt tokens and cost per task and in total (run/estimate.py)
        show_estimate(console, tasks, cfg)
    except PromptweaveError as exc:
        fail(err, exc)
    for j in result.run.models:
        note = batching_note(cfg.models[j], cfg.model_abbrs()[j])
        if note:
            console.print(note, markup=False, soft_wrap=True)
    for t in result.refused:  # the other tasks run; these fail with this line, so a dry run shows it up front
        err.print(f"will fail: {t.dataset} × {t.model_name}: {t.refused}", style="yellow", markup=False,
                  soft_wrap=True)
    reads = {**cfg.env_reads, **env_reads()}  # the config's own reads and the API keys its models asked for
    if reads:  # names only, never their values
        console.print("config read env: " + ", ".join(
            f"{name} ({'set' if is_set else 'unset'})" for name, is_set in sorted(reads.items())))
    from promptweave.data.listing import config_sources  # every data source, and every host a key goes to
    from promptweave.models.factory import describe_key_destinations

    for line in [src.line() for _, src in config_sources(cfg, result.run.datasets)] + describe_key_destinations(
            cfg, result.run.models, result.run.datasets):
        console.print(line, markup=False, soft_wrap=True)


def show_outcomes(console: Any, err: Any, result: Any) -> None:
    from promptweave.run.execute import summary_table

    console.print(summary_table(result.outcomes))
    for o in result.outcomes:
        if not o.ok:
            err.print(f"failed: {o.dataset} × {o.model}: {o.error}", style="red", markup=False, soft_wrap=True)
    console.print(f"predictions and results in {result.run.options.workdir}")


def show_report(console: Any, err: Any, result: Any) -> None:
    if result.report is not None:
        console.print(f"report: {result.report}")
    else:
        err.print(f"warning: no report written ({result.report_error}); retry with: promptweave report "
                  f"{result.run.options.workdir}", style="yellow", markup=False, soft_wrap=True)
