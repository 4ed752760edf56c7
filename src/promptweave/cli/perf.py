"""``promptweave perf CONFIG -w DIR --concurrency 1,16,256``: a serving-performance sweep (run/perf/), and the
printing that ``run --mode perf`` shares."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import typer

from promptweave.cli.app import app
from promptweave.cli.options import run_options
from promptweave.run.options import RunOptions


def _progress(console: Any, enabled: bool) -> tuple[Any, Callable[[str, int | None], Callable[[int], None] | None]]:
    if not enabled:
        return None, lambda label, total: None
    from rich.progress import Progress

    bar = Progress(console=console, transient=True)

    def start(label: str, total: int | None) -> Callable[[int], None]:
        task = bar.add_task(label, total=total)
        return lambda n: bar.advance(task, n)

    return bar, start


def show_levels(console: Any, err: Any, levels: list, workdir: Path) -> None:
    """One table row per measured level, then where the files are and any failures."""
    from rich.table import Table

    table = Table(title="serving performance (total stage; medians)")
    for col in ("model", "dataset", "conc.", "requests", "failed", "reached", "TTFT ms", "TPOT ms", "E2EL ms",
                "req/s", "out token/s", "steady"):
        table.add_column(col)
    for lv in levels:
        raw = lv.total.raw
        med = raw["medians"]
        table.add_row(lv.model, lv.dataset, str(lv.concurrency), str(raw["Total Requests"]),
                      str(raw["Failed Requests"]), str(raw["Concurrency"]), f"{med['TTFT'] * 1000:.1f}",
                      f"{med['TPOT'] * 1000:.2f}", f"{med['E2EL'] * 1000:.1f}", str(raw["Request Throughput"]),
                      str(raw.get("Output Token Throughput", "")),
                      "yes" if lv.stable is not None else "none")
    console.print(table)
    for lv in levels:
        if lv.failed:
            err.print(f"failed requests: {lv.model} · {lv.dataset} @ {lv.concurrency}: {lv.failed}; the first: "
                      f"{lv.first_error[:200]}", style="yellow", markup=False, soft_wrap=True)
        if "output:events" in lv.token_sources:
            err.print(f"note: {lv.model} · {lv.dataset}: the server streamed no usage and the model has no "
                      "tokenizer_path, so output tokens are the count of streamed text events",
                      style="yellow", markup=False, soft_wrap=True)
    console.print(f"perf files in {Path(workdir) / 'performances'}", markup=False)


def run_perf_mode(config: Path, opts: Any, console: Any, err: Any) -> None:
    """``run --mode perf``: every selected dataset × model at the model's own concurrency and rate."""
    from promptweave.cli.common import fail, print_warnings
    from promptweave.errors import PromptweaveError
    from promptweave.report.perf_page import write_perf_page
    from promptweave.run.lock import workdir_lock
    from promptweave.run.perf import PerfOptions, run_perf
    from promptweave.run.pipeline import collected_warnings, open_run

    noted: list[str] = []
    perf = PerfOptions(executor=opts.executor, workers=opts.workers, address=opts.address)
    bar, start = _progress(console, opts.show_progress and opts.executor == "local")
    try:
        with collected_warnings(noted):
            run = open_run(config, opts)
            with workdir_lock(opts.workdir, wait=opts.wait):
                kw = dict(datasets=run.datasets, models=run.models, limit=opts.limit, allow_code=opts.trust_config,
                          options=perf)
                if bar is not None:
                    with bar:
                        levels = run_perf(run.config, opts.workdir, progress=start, **kw)
                else:
                    levels = run_perf(run.config, opts.workdir, **kw)
    except PromptweaveError as exc:
        print_warnings(err, noted)
        fail(err, exc)
    print_warnings(err, noted)
    show_levels(console, err, levels, opts.workdir)
    console.print(f"page: {write_perf_page(Path(opts.workdir))}", markup=False)


@app.command("perf")
@run_options("select", "policy")
def perf_cmd(
    config: Path = typer.Argument(..., help="Config file (.py, .yaml or .json) with an OpenAI-protocol model."),
    workdir: Path = typer.Option(Path("outputs"), "-w", "--work-dir", help="Where performances/ and perf.html go."),
    concurrency: str = typer.Option(..., "--concurrency", help="Concurrency levels to measure, e.g. 1,16,256."),
    rate: Optional[float] = typer.Option(None, "--rate", min=0, help="Requests per second (default: the model's "
                                         "request_rate; 0: as fast as the concurrency allows)."),
    requests: Optional[int] = typer.Option(None, "--requests", min=1, help="Requests per level (default: 4 × "
                                           "the level, or all rows if fewer)."),
    duration: Optional[float] = typer.Option(None, "--duration", min=0.001, help="Seconds per level: requests "
                                             "start until then (rows are reused), and the last ones finish."),
    synthetic: Optional[str] = typer.Option(None, "--synthetic", help="IN,OUT: synthetic prompts of IN tokens "
                                            "asking for OUT tokens (ignore_eos), instead of the datasets' rows."),
    seed: int = typer.Option(0, "--seed", help="Seed of the arrival times and synthetic prompts."),
    executor: str = typer.Option("local", "--executor", help="local (one client process) or ray (several client "
                                 "processes as Ray tasks, merged into one timeline; needs promptweave[ray])."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Ray: client processes per level "
                                          "(default: one per 64 streams, at most 8)."),
    address: Optional[str] = typer.Option(None, "--address", help="Ray: join this running cluster (default: a "
                                          "local instance on loopback)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bars."),
    *, opts: RunOptions,
) -> None:
    """Measure a serving endpoint at several concurrency levels: AISBench's perf files per level and perf.html."""
    from rich.console import Console

    from promptweave.run.perf import PerfOptions

    perf = PerfOptions(rate=rate, requests=requests, duration=duration, seed=seed, executor=executor,
                       workers=workers, address=address)
    sweep(config, opts, workdir, concurrency, synthetic, perf, not no_progress, Console(highlight=False),
          Console(stderr=True, highlight=False))


def sweep(config: Path, opts: Any, workdir: Path, concurrency: str, synthetic: str | None, perf: Any,
          show_progress: bool, console: Any, err: Any) -> None:
    """``perf``'s work: options checked, the config opened as ``run`` opens it, the levels measured, the page."""
    from dataclasses import replace

    from promptweave.cli.common import fail, print_warnings
    from promptweave.errors import PerfConfigError, PromptweaveError
    from promptweave.run.lock import workdir_lock
    from promptweave.run.perf import parse_levels, run_sweep
    from promptweave.run.perf.sweep import parse_synthetic
    from promptweave.run.pipeline import collected_warnings, open_run

    noted: list[str] = []
    try:
        if perf.requests is not None and perf.duration is not None:
            raise PerfConfigError("give --requests or --duration, not both", field="--duration", value=perf.duration)
        if perf.executor not in ("local", "ray"):
            raise PerfConfigError("unknown executor", field="--executor", value=perf.executor,
                                  expected="local or ray")
        levels = parse_levels(concurrency)
        if synthetic is not None:
            perf = replace(perf, synthetic=parse_synthetic(synthetic))
        bar, start = _progress(console, show_progress and perf.executor == "local")
        with collected_warnings(noted):
            run = open_run(config, replace(opts, workdir=workdir))
            with workdir_lock(workdir):
                kw = dict(options=perf, datasets=run.datasets, models=run.models, limit=opts.limit,
                          allow_code=opts.trust_config)
                if bar is not None:
                    with bar:
                        got, page = run_sweep(run.config, workdir, levels, progress=start, **kw)
                else:
                    got, page = run_sweep(run.config, workdir, levels, **kw)
    except PromptweaveError as exc:
        print_warnings(err, noted)
        fail(err, exc)
    print_warnings(err, noted)
    show_levels(console, err, got, workdir)
    console.print(f"page: {page}", markup=False)
