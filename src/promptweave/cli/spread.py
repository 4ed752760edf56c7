"""``promptweave spread CONFIG -w DIR``: how much of each score is the prompt's format (``spread/``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from promptweave.cli.app import app
from promptweave.cli.options import run_options
from promptweave.run.options import RunOptions


def _pct(x: Any) -> str:
    return "-" if x is None else f"{x:.2f}"


@app.command("spread")
@run_options("select", "policy", "scoring", "execute", workdir={"default": ..., "help": "Where variants/<k>/ (run's layout), "
                                                    "spread.json and the response cache go; rerun the same command "
                                                    "to resume."})
def spread_cmd(
    config: Path = typer.Argument(..., help="Config file (.py, .yaml or .json)."),
    n: int = typer.Option(16, "-n", min=1, help="Variants per dataset, variant 0 being the config's template."),
    seed: int = typer.Option(0, "--seed", help="Which formats the grammar draws (the same seed, the same variants)."),
    search: Optional[str] = typer.Option(None, "--search", help="'extremes': find the best and worst variant "
                                         "within --budget calls (Thompson sampling) instead of running them all."),
    budget: Optional[int] = typer.Option(None, "--budget", min=1, help="Model calls --search may use per "
                                         "dataset × model."),
    *, opts: RunOptions,
) -> None:
    """Run N format variants of each dataset's own template; report each variant's score, the spread and PSS."""
    from rich.console import Console

    from promptweave.cli.common import ExitCode, fail, print_warnings
    from promptweave.errors import PromptweaveError
    from promptweave.run.pipeline import collected_warnings
    from promptweave.spread.pipeline import SpreadOptions, spread_config

    console = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    noticed: list[str] = []
    try:
        with collected_warnings(noticed):
            result = spread_config(config, opts, SpreadOptions(n=n, seed=seed, search=search, budget=budget),
                                   console=console, notify=lambda msg: err.print(msg, style="yellow", markup=False))
    except PromptweaveError as exc:
        print_warnings(err, noticed)
        fail(err, exc)
    print_warnings(err, noticed)
    workdir = opts.workdir
    if opts.dry_run:
        _print_plan(console, result.run.config, result.variants, result.planned)
        return
    if search:
        _print_search(console, result.data)
        console.print(f"variants and findings in {workdir / 'spread.json'}")
        return
    _print_figures(console, result.data)
    for o in result.failed:
        err.print(f"failed: {o.dataset} × {o.model}: {o.error}", style="red", markup=False, soft_wrap=True)
    console.print(f"figures in {workdir / 'spread.json'}; each variant's predictions and results in "
                  f"{workdir / 'variants'}/<k>/")
    if result.report is not None:
        console.print(f"report: {result.report}")
    elif result.report_error is not None:
        err.print(f"warning: no report written ({result.report_error}); retry with: promptweave report "
                  f"{workdir}", style="yellow", markup=False, soft_wrap=True)
    if result.failed:
        raise typer.Exit(ExitCode.FAILURES)
    if not result.complete:
        raise typer.Exit(ExitCode.FAILED_ROWS)


def _extreme(fig: dict[str, Any], key: str) -> str:
    """The best (worst) variant; none is when the top (bottom) score is tied, or a single variant scored."""
    return str(fig[key]) if fig[key] is not None else "tied" if fig["scored"] > 1 else "-"


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
                      f"PSS {pss}  best {_extreme(fig, 'best')}  worst {_extreme(fig, 'worst')}", soft_wrap=True)
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
