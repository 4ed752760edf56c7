"""``promptweave perf CONFIG -w DIR --concurrency 1,16,256``: a serving-performance sweep (run/perf/), and the
printing that ``run --mode perf`` shares."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from promptweave.cli.app import app


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


def run_perf_mode(cfg: Any, workdir: Path, datasets: list, models: list, limit: int | None, trust_config: bool,
                  show_progress: bool, console: Any, err: Any, *, executor: str = "local",
                  workers: int | None = None, address: str | None = None) -> None:
    """``run --mode perf``: every selected dataset × model at the model's own concurrency and rate."""
    from promptweave.run.lock import workdir_lock
    from promptweave.run.perf import PerfOptions, run_perf

    opts = PerfOptions(executor=executor, workers=workers, address=address)
    bar, start = _progress(console, show_progress and executor == "local")
    with workdir_lock(workdir):
        if bar is not None:
            with bar:
                levels = run_perf(cfg, workdir, datasets=datasets, models=models, limit=limit,
                                  allow_code=trust_config, options=opts, progress=start)
        else:
            levels = run_perf(cfg, workdir, datasets=datasets, models=models, limit=limit, allow_code=trust_config,
                              options=opts)
    show_levels(console, err, levels, workdir)
    from promptweave.report.perf_page import write_perf_page

    console.print(f"page: {write_perf_page(Path(workdir))}", markup=False)


@app.command("perf")
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
    dataset: Optional[List[str]] = typer.Option(None, "--dataset", "-d", help="Dataset abbr(s) (default: all)."),
    model: Optional[List[str]] = typer.Option(None, "--model", "-m", help="Model abbr(s) (default: all)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the arrival times and synthetic prompts."),
    executor: str = typer.Option("local", "--executor", help="local (one client process) or ray (several client "
                                 "processes as Ray tasks, merged into one timeline; needs promptweave[ray])."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Ray: client processes per level "
                                          "(default: one per 64 streams, at most 8)."),
    address: Optional[str] = typer.Option(None, "--address", help="Ray: join this running cluster (default: a "
                                          "local instance on loopback)."),
    trust_config: bool = typer.Option(False, "--trust-config", help="Run a .py config as Python."),
    allow_env: Optional[List[str]] = typer.Option(None, "--allow-env", help="Let the config read this "
                                                  "credential-looking environment variable; repeatable."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bars."),
) -> None:
    """Measure a serving endpoint at several concurrency levels: AISBench's perf files per level and perf.html."""
    from rich.console import Console

    from promptweave.cli.common import fail, select
    from promptweave.config import load_config
    from promptweave.errors import PerfConfigError, PromptweaveError
    from promptweave.run.lock import workdir_lock
    from promptweave.run.perf import PerfOptions, parse_levels, run_sweep
    from promptweave.run.perf.sweep import parse_synthetic

    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    try:
        if requests is not None and duration is not None:
            raise PerfConfigError("give --requests or --duration, not both", field="--duration", value=duration)
        levels = parse_levels(concurrency)
        synth = parse_synthetic(synthetic) if synthetic is not None else None
        from promptweave.sandbox.env import set_policy

        set_policy(allow_env or (), trusted=trust_config)
        cfg = load_config(config, trust=trust_config)
        ds_ids = select(cfg.dataset_abbrs(), dataset, "dataset", cfg)
        model_ids = select(cfg.model_abbrs(), model, "model", cfg)
        from promptweave.models.factory import check_api_keys

        check_api_keys(cfg, model_ids, ds_ids)
        if executor not in ("local", "ray"):
            raise PerfConfigError("unknown executor", field="--executor", value=executor, expected="local or ray")
        opts = PerfOptions(rate=rate, requests=requests, duration=duration, synthetic=synth, seed=seed,
                           executor=executor, workers=workers, address=address)
        bar, start = _progress(console, not no_progress and executor == "local")
        with workdir_lock(workdir), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if bar is not None:
                with bar:
                    got, page = run_sweep(cfg, workdir, levels, options=opts, datasets=ds_ids, models=model_ids,
                                          allow_code=trust_config, progress=start)
            else:
                got, page = run_sweep(cfg, workdir, levels, options=opts, datasets=ds_ids, models=model_ids,
                                      allow_code=trust_config)
    except PromptweaveError as exc:
        fail(err, exc)
    for msg in dict.fromkeys(str(w.message) for w in caught):
        err.print(f"warning: {msg}", style="yellow", markup=False, soft_wrap=True)
    show_levels(console, err, got, workdir)
    console.print(f"page: {page}", markup=False)
