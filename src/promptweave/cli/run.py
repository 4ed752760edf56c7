"""``promptweave run CONFIG -w WORKDIR``: evaluate every dataset × model, resumably."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from promptweave.cli.app import app


@app.command("run")
def run_cmd(
    config: Path = typer.Argument(..., help="An OpenCompass / AISBench / promptweave config file."),
    workdir: Path = typer.Option(Path("outputs"), "-w", "--work-dir", help="Where predictions, results and the "
                                 "response cache go; rerun with the same folder to resume."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N rows of each dataset."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Plan and show the tasks; send nothing."),
    allow_code: bool = typer.Option(False, "--allow-code", help="Allow callables from the config to run "
                                    "(custom postprocessors)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bars."),
) -> None:
    """Send each dataset's prompts to each model, score the answers, write predictions and results."""
    from rich.console import Console
    from rich.table import Table

    from promptweave.errors import PromptweaveError
    from promptweave.run import run_tasks, summary_table
    from promptweave.run.plan import plan_tasks

    console = Console()
    if not config.exists():
        console.print(f"[red]error:[/red] no such config file: {config}")
        raise typer.Exit(2)
    try:
        from promptweave.config import load_config
        from promptweave.engine import build_prompts
    except ImportError as exc:  # the engine is a separate part of the package
        console.print(f"[red]error:[/red] the prompt engine is not available: {exc}")
        raise typer.Exit(2)
    try:
        cfg = load_config(str(config))
        tasks = plan_tasks(list(cfg.datasets), list(cfg.models), build_prompts, limit=limit, allow_code=allow_code)
    except PromptweaveError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2)
    if dry_run:
        table = Table(title=f"plan: {len(tasks)} task(s), nothing sent")
        for col in ("dataset", "model", "mode", "rows", "prompts"):
            table.add_column(col)
        for t in tasks:
            table.add_row(t.dataset, t.model_name, t.mode, str(t.rows), str(len(t.records)))
        console.print(table)
        return
    outcomes = run_tasks(tasks, workdir, show_progress=not no_progress, console=console)
    console.print(summary_table(outcomes))
    console.print(f"predictions and results in {workdir}")
    if not all(o.ok for o in outcomes):
        raise typer.Exit(1)
