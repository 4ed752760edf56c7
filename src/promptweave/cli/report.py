"""``promptweave report WORKDIR [WORKDIR_B]``: the HTML report of a run, a comparison of two, or the score table."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from promptweave.cli.app import app


@app.command("report")
def report_cmd(
    workdirs: Annotated[list[Path], typer.Argument(help="A run's work dir, or two to compare (A then B).")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="HTML file to write (default: WORKDIR/"
                                                "report.html, or B/compare.html for two).")] = None,
    csv_out: Annotated[str | None, typer.Option("--csv", help="Write the score table as CSV to this file "
                                                "('-': stdout).")] = None,
    md_out: Annotated[str | None, typer.Option("--markdown", help="Write the score table as Markdown to this "
                                               "file ('-': stdout).")] = None,
) -> None:
    """One self-contained HTML page: scores, every row's prompt, answer and verdict, charts and run metadata."""
    from rich.console import Console

    from promptweave.cli.common import fail
    from promptweave.errors import PromptweaveError, ReportError
    from promptweave.report import (
        load_workdir,
        score_table,
        to_csv,
        to_markdown,
        write_report,
    )

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        if len(workdirs) > 2:
            raise ReportError("report takes one work dir, or two to compare", field="WORKDIR",
                              value=[str(w) for w in workdirs], expected="1 or 2 paths")
        exports = [(dest, fmt) for dest, fmt in ((csv_out, to_csv), (md_out, to_markdown)) if dest]
        if exports:
            if len(workdirs) != 1:
                raise ReportError("--csv / --markdown export one work dir's table", field="WORKDIR",
                                  value=[str(w) for w in workdirs], expected="one path")
            table = score_table(load_workdir(workdirs[0]))
            for dest, fmt in exports:
                text = fmt(table)
                if dest == "-":
                    sys.stdout.write(text)
                else:
                    Path(dest).parent.mkdir(parents=True, exist_ok=True)
                    Path(dest).write_text(text, encoding="utf-8")
                    err.print(f"score table written to {dest}", markup=False)
            if output is None:
                return
        if output is None:
            output = workdirs[0] / "report.html" if len(workdirs) == 1 else workdirs[1] / "compare.html"
        if len(workdirs) == 1 and (workdirs[0] / "spread.json").is_file():  # a spread's own page
            from promptweave.report.spread_page import write_spread_report

            path = write_spread_report(workdirs[0], output)
        else:
            path = write_report(workdirs, output)
    except PromptweaveError as exc:
        fail(err, exc)
    except OSError as exc:
        fail(err, ReportError(f"cannot write the report: {exc.strerror or exc}", file=str(output),
                              expected="a writable path for -o"))
    err.print(f"report written to {path} ({path.stat().st_size / 1e6:.2f} MB)", markup=False)
