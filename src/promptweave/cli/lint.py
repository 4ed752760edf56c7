"""``promptweave lint``: check config files as ``run`` plans them, without calling a model (``run.lint``)."""
from __future__ import annotations

from pathlib import Path

import typer

from promptweave.cli.app import app


@app.command("lint")
def lint_cmd(
    configs: list[Path] = typer.Argument(..., help="Config file(s) (.py, .yaml or .json); dataset configs too."),
    dataset: list[str] | None = typer.Option(None, "--dataset", "-d", help="Dataset abbr(s) (default: all)."),
    model: list[str] | None = typer.Option(None, "--model", "-m", help="Model abbr(s) (default: all)."),
    limit: int | None = typer.Option(None, help="Build at most this many rows per dataset."),
    no_data: bool = typer.Option(False, "--no-data", help="Check everything but the rows (no data is read)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="With several files, show every pair and warning."),
    trust_config: bool = typer.Option(False, "--trust-config", help="Run a .py config as Python (it may run code)."),
    allow_data: list[str] | None = typer.Option(None, "--allow-data", help="Let a safe-mode config read data "
                                                   "at this path (file or folder) outside the data roots; repeatable."),
    allow_env: list[str] | None = typer.Option(None, "--allow-env", help="Let the config read this "
                                                  "credential-looking environment variable, or send it as a model's "
                                                  "API key (key='ENV' / api_key_env) to the one host the config "
                                                  "sends it to; NAME@HOST grants each host by name; repeatable."),
) -> None:
    """Check config files as 'run' would (templates, roles, forms, eval_cfg, prompts) without calling a model.

    Prints one line per file and a total; exits 2 (bad input, as 'run' and 'view' do for the same error)
    when any file has a problem. 'run --dry-run' gives the same verdict on the same config.
    """
    from rich.console import Console

    from promptweave.run.lint import lint_file, summary_line
    from promptweave.sandbox.env import set_policy

    set_policy(allow_env or (), trusted=trust_config)  # the user's env allow-list, before any read
    from promptweave.data.roots import set_data_policy

    set_data_policy(allow_data or (), trusted=trust_config)  # the user's --allow-data paths, before any read

    console = Console(highlight=False, soft_wrap=True)
    detail = verbose or len(configs) == 1
    problems = failed = 0
    for path in configs:
        report = lint_file(path, no_data=no_data, trust=trust_config, limit=limit, datasets=dataset, models=model)
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
