"""``promptweave spread CONFIG -w DIR``: how much of each score is the prompt's format (``spread/``)."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, List, Optional

import typer

from promptweave.cli.app import app


def _pct(x: Any) -> str:
    return "-" if x is None else f"{x:.2f}"


@app.command("spread")
def spread_cmd(
    config: Path = typer.Argument(..., help="Config file (.py, .yaml or .json)."),
    workdir: Path = typer.Option(..., "-w", "--work-dir", help="Where variants/<k>/ (run's layout), spread.json "
                                 "and the response cache go; rerun the same command to resume."),
    dataset: Optional[List[str]] = typer.Option(None, "--dataset", "-d", help="Dataset abbr(s) (default: all)."),
    model: Optional[List[str]] = typer.Option(None, "--model", "-m", help="Model abbr(s) (default: all)."),
    n: int = typer.Option(16, "-n", min=1, help="Variants per dataset, variant 0 being the config's template."),
    seed: int = typer.Option(0, "--seed", help="Which formats the grammar draws (the same seed, the same variants)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N test rows of each dataset."),
    search: Optional[str] = typer.Option(None, "--search", help="'extremes': find the best and worst variant "
                                         "within --budget calls (Thompson sampling) instead of running them all."),
    budget: Optional[int] = typer.Option(None, "--budget", min=1, help="Model calls --search may use per "
                                         "dataset × model."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Plan every variant and show them; load no model, send "
                                 "nothing, write nothing."),
    trust_config: bool = typer.Option(False, "--trust-config", help="Run a .py config as Python and allow its "
                                      "callables (custom postprocessors) to run."),
    allow_data: Optional[List[str]] = typer.Option(None, "--allow-data", help="Let a safe-mode config read data "
                                                   "at this path (file or folder) outside the data roots; repeatable."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bars."),
    on_row_error: str = typer.Option("wrong", "--on-row-error", help="As for run: wrong, skip or fail."),
    no_wait: bool = typer.Option(False, "--no-wait", help="If another run is writing to the work dir, stop at "
                                 "once (exit 4) instead of waiting for it."),
    no_report: bool = typer.Option(False, "--no-report", help="Do not write DIR/report.html at the end."),
    allow_code_exec: bool = typer.Option(False, "--allow-code-exec", help="As for run: let code evaluators run "
                                         "the model's code, in a limited subprocess."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", help="As for run: the judge of LLM-judged "
                                              "datasets whose judge_cfg is empty."),
    executor: str = typer.Option("local", "--executor", help="local or ray (as for run)."),
    address: Optional[str] = typer.Option(None, "--address", help="Ray: join this running cluster."),
    shard_rows: Optional[int] = typer.Option(None, "--shard-rows", min=1, help="Ray: rows per shard."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Ray: model replicas per model."),
    num_gpus: Optional[float] = typer.Option(None, "--num-gpus", min=0, help="Ray: GPUs per replica."),
    num_cpus: Optional[float] = typer.Option(None, "--num-cpus", min=0, help="Ray: CPUs per replica."),
) -> None:
    """Run N format variants of each dataset's own template; report each variant's score, the spread and PSS."""
    from rich.console import Console

    from promptweave.cli.common import ExitCode, fail, select
    from promptweave.config import load_config
    from promptweave.errors import ConfigError, PromptweaveError
    from promptweave.spread.execute import SpreadRequest, run_search, run_spread

    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if on_row_error not in ("wrong", "skip", "fail"):
                raise ConfigError("unknown --on-row-error", field="--on-row-error", value=on_row_error,
                                  expected="wrong, skip or fail")
            if executor not in ("local", "ray"):
                raise ConfigError("unknown executor", field="--executor", value=executor, expected="local or ray")
            if search not in (None, "extremes"):
                raise ConfigError("unknown search", field="--search", value=search, expected="extremes")
            if search and budget is None:
                raise ConfigError("--search extremes needs a call budget", field="--budget",
                                  expected="--budget CALLS (model calls per dataset × model)")
            if budget is not None and not search:
                raise ConfigError("--budget applies to --search extremes", field="--budget", value=budget,
                                  expected="--search extremes --budget CALLS")
            if search and executor != "local":
                raise ConfigError("--search extremes runs in this process (it decides each next row from the "
                                  "last answers)", field="--executor", value=executor, expected="local")
            from promptweave.data.roots import set_data_policy

            set_data_policy(allow_data or (), trusted=trust_config)  # the user's --allow-data paths, before any read
            cfg = load_config(config, trust=trust_config)
            ds_ids = select(cfg.dataset_abbrs(), dataset, "dataset", cfg)
            model_ids = select(cfg.model_abbrs(), model, "model", cfg)
            from promptweave.evaluate import prepare_tasks
            from promptweave.evaluate.judge import judge_model_cfg

            judge_cfg = judge_model_cfg(cfg, judge_model)

            def prepare(planned: list) -> None:
                try:
                    prepare_tasks(planned, allow_code_exec=allow_code_exec, judge_model=judge_cfg)
                except PromptweaveError as exc:
                    raise (exc if exc.file else exc.at(file=str(config))) from None

            req = SpreadRequest(cfg, workdir, ds_ids, model_ids, n=n, seed=seed, limit=limit,
                                allow_code=trust_config, on_row_error=on_row_error, show_progress=not no_progress,
                                console=console, prepare=prepare, wait=not no_wait,
                                notify=lambda msg: err.print(msg, style="yellow", markup=False),
                                executor=executor,
                                executor_options={"address": address, "shard_rows": shard_rows, "workers": workers,
                                                  "num_gpus": num_gpus, "num_cpus": num_cpus})
            if dry_run:
                from promptweave.spread.execute import plan_tasks, plan_variants

                variants = plan_variants(req)
                planned = plan_tasks(req, variants)
            elif search:
                data = run_search(req, budget or 0)
                outcomes: dict[int, list] = {}
            else:
                data, outcomes = run_spread(req)
        except PromptweaveError as exc:
            for msg in dict.fromkeys(str(w.message) for w in caught):
                err.print(f"warning: {msg}", style="yellow", markup=False, soft_wrap=True)
            fail(err, exc)
    for msg in dict.fromkeys(str(w.message) for w in caught):
        err.print(f"warning: {msg}", style="yellow", markup=False, soft_wrap=True)
    if dry_run:
        _print_plan(console, cfg, variants, planned)
        return
    if search:
        _print_search(console, data)
        console.print(f"variants and findings in {workdir / 'spread.json'}")
        return
    _print_figures(console, data)
    failed = [o for outs in outcomes.values() for o in outs if not o.ok]
    for o in failed:
        err.print(f"failed: {o.dataset} × {o.model}: {o.error}", style="red", markup=False, soft_wrap=True)
    console.print(f"figures in {workdir / 'spread.json'}; each variant's predictions and results in "
                  f"{workdir / 'variants'}/<k>/")
    if not no_report:  # the spread page and each variant's report; a report problem never fails the command
        from promptweave.report.spread_page import write_spread_report

        try:
            console.print(f"report: {write_spread_report(workdir)}")
        except Exception as exc:  # noqa: BLE001 - the figures are safe on disk
            err.print(f"warning: no report written ({type(exc).__name__}: {exc}); retry with: promptweave report "
                      f"{workdir}", style="yellow", markup=False, soft_wrap=True)
    if failed:
        raise typer.Exit(ExitCode.FAILURES)
    if not all(o.complete for outs in outcomes.values() for o in outs):
        raise typer.Exit(ExitCode.FAILED_ROWS)


def _print_figures(console: Any, data: dict[str, Any]) -> None:
    from rich.table import Table

    for fig in data["figures"]:
        t = Table(title=f"{fig['dataset']} × {fig['model']}: {fig['metric'] or 'score'} per variant")
        for col in ("variant", "score", "format"):
            t.add_column(col, overflow="fold" if col == "format" else "ellipsis")
        for p in fig["points"]:
            mark = " (best)" if p["variant"] == fig["best"] else " (worst)" if p["variant"] == fig["worst"] else ""
            t.add_row(str(p["variant"]), (_pct(p["score"]) if p["score"] is not None else p["status"]) + mark,
                      p["description"])
        console.print(t)
    for fig in data["figures"]:  # one line each: a table this wide would be cut at 80 columns
        if fig["mean"] is None:
            console.print(f"{fig['dataset']} × {fig['model']}: no variant was scored")
            continue
        ci = fig["ci95"]
        pss = "-" if fig["pss"] is None else f"{fig['pss']:.3f}"
        console.print(f"{fig['dataset']} × {fig['model']} ({fig['metric']}, {fig['scored']}/{fig['variants']} "
                      f"variants): min {_pct(fig['min'])}  max {_pct(fig['max'])}  spread {_pct(fig['spread'])}  "
                      f"mean {_pct(fig['mean'])}  std {_pct(fig['std'])}  mean 95% CI {ci[0]:.2f}–{ci[1]:.2f}  "
                      f"PSS {pss}  best {fig['best']}  worst {fig['worst']}", soft_wrap=True)
    for r in data["rankings"]:
        per = r["per_variant"]
        if per and len(per[0]["ranking"]) > 1:
            console.print(f"{r['dataset']}: the top model changes in {r['top_changes']} of {len(per) - 1} variant(s) "
                          f"against variant 0; top models: {', '.join(r['top_models']) or '-'}")


def _print_plan(console: Any, cfg: Any, variants: dict, planned: dict) -> None:
    from rich.table import Table

    from promptweave.spread.execute import task_dataset_name

    tasks = [t for ts in planned.values() for t in ts]
    t = Table(title=f"spread plan: {len(tasks)} task(s), {sum(x.calls for x in tasks)} call(s); nothing sent")
    for col in ("dataset", "variant", "format"):
        t.add_column(col, overflow="fold" if col == "format" else "ellipsis")
    for i, vs in variants.items():
        for v in vs:
            t.add_row(task_dataset_name(cfg.datasets[i]), str(v.index), v.description)
    console.print(t)


def _print_search(console: Any, data: dict[str, Any]) -> None:
    from rich.table import Table

    t = Table(title="promptweave spread --search extremes")
    for col in ("dataset", "model", "best", "best 95%", "worst", "worst 95%", "calls used", "sent", "stopped"):
        t.add_column(col)
    for f in data["search"]:
        def iv(x: Any) -> str:
            return "-" if not x else f"{x[0]:.1f}–{x[1]:.1f}"

        t.add_row(f["dataset"], f["model"], f"{f['best']} ({f['p_best']:.2f})", iv(f["best_interval"]),
                  f"{f['worst']} ({f['p_worst']:.2f})", iv(f["worst_interval"]), f"{f['calls_used']}/{f['budget']}",
                  str(f["sent"]), f["stopped"])
    console.print(t)
    for f in data["search"]:
        console.print(f"{f['dataset']} × {f['model']}: best {f['best']}: {f['best_description']}; "
                      f"worst {f['worst']}: {f['worst_description']}")
