from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from promptweave.cli.app import app
from promptweave.cli.common import ExitCode


@app.command("conformance")
def conformance_cmd(
    files: list[Path] | None = typer.Argument(None, help="Corpus files in the SCHEMA format (gzip JSONL); "
                                                 "default: every *.jsonl.gz in $PROMPTWEAVE_CONFORMANCE, else in "
                                                 "shared/conformance beside the checkout (../shared/conformance)."),
    show: int = typer.Option(3, help="How many failures to print with a diff."),
) -> None:
    """Run reference conformance corpora through the engine; exit non-zero on any failure."""
    from promptweave.conformance.runner import print_report, run_files

    if not files:
        files = _default_corpora()
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        typer.echo(f"error: no such corpus file: {', '.join(missing)}", err=True)
        raise typer.Exit(ExitCode.BAD_INPUT)
    report = run_files(files)
    print_report(report, sys.stdout, show=show)
    if report.failed:
        raise typer.Exit(ExitCode.FAILURES)


def _default_corpora() -> list[Path]:
    """The corpora where CI keeps them: $PROMPTWEAVE_CONFORMANCE, else ``shared/conformance`` beside the checkout."""
    here = Path(__file__).resolve()
    places = [Path(os.environ["PROMPTWEAVE_CONFORMANCE"])] if os.environ.get("PROMPTWEAVE_CONFORMANCE") else []
    places += [Path.cwd().parent / "shared" / "conformance", Path.cwd() / "shared" / "conformance"]
    places += [p.parent / "shared" / "conformance" for p in here.parents[2:4]]
    for place in places:
        found = sorted(place.glob("*.jsonl.gz")) if place.is_dir() else []
        if found:
            return found
    typer.echo("error: no conformance corpora found: pass the files, or set PROMPTWEAVE_CONFORMANCE to their "
               f"folder (looked in {', '.join(str(p) for p in places)})", err=True)
    raise typer.Exit(ExitCode.BAD_INPUT)
