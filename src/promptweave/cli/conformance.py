from __future__ import annotations

import sys
from pathlib import Path
from typing import List

import typer

from promptweave.cli.app import app


@app.command("conformance")
def conformance_cmd(
    files: List[Path] = typer.Argument(..., help="Corpus files in the SCHEMA format (gzip JSONL)."),
    show: int = typer.Option(3, help="How many failures to print with a diff."),
) -> None:
    """Run reference conformance corpora through the engine; exit non-zero on any failure."""
    from promptweave.conformance.runner import print_report, run_files

    missing = [str(f) for f in files if not f.exists()]
    if missing:
        typer.echo(f"error: no such corpus file: {', '.join(missing)}", err=True)
        raise typer.Exit(2)
    report = run_files(files)
    print_report(report, sys.stdout, show=show)
    if report.failed:
        raise typer.Exit(1)
