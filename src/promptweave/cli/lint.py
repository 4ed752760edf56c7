"""``promptweave lint``: check config files as ``run`` plans them, without calling a model (``run.lint``)."""
from __future__ import annotations

from pathlib import Path

import typer

from promptweave.cli.app import app
from promptweave.cli.options import run_options
from promptweave.run.options import RunOptions


@app.command("lint")
@run_options("select", "policy", "scoring", limit={"help": "Build at most this many rows per dataset."})
def lint_cmd(
    configs: list[Path] = typer.Argument(..., help="Config file(s) (.py, .yaml or .json); dataset configs too."),
    no_data: bool = typer.Option(False, "--no-data", help="Check everything but the rows (no data is read)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="With several files, show every pair and warning."),
    *, opts: RunOptions,
) -> None:
    """Check config files as 'run' would (templates, roles, forms, eval_cfg, prompts) without calling a model.

    Prints one line per file and a total; exits 2 (bad input, as 'run' and 'view' do for the same error)
    when any file has a problem. 'run --dry-run' gives the same verdict on the same config.
    """
    from rich.console import Console

    from promptweave.run.lint import lint_file, summary_line

    console = Console(highlight=False, soft_wrap=True)
    detail = verbose or len(configs) == 1
    problems = failed = 0
    for path in configs:
        report = lint_file(path, no_data=no_data, options=opts)
        if detail:
            for line in report.lines:
                console.print(line, markup=False)
            for p in report.problems:
                console.print(f"error: {p}", style="red", markup=False)
            for w in report.warnings:
                console.print(f"warning: {w}", style="yellow", markup=False)
        console.print(summary_line(report, detail=detail), style=None if report.ok else "red", markup=False)
        problems += len(report.problems)
        failed += not report.ok
    n = len(configs)
    console.print(f"{n} file(s): {n - failed} ok, {failed} with problems; {problems} problem(s) found")
    if problems:
        from promptweave.cli.common import ExitCode

        raise typer.Exit(ExitCode.BAD_INPUT)  # the code run/view give the same error
