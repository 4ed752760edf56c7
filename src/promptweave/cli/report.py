"""``promptweave report WORKDIR [WORKDIR_B]``: the HTML report of a run, a comparison of two, or the score table."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

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
    json_out: Annotated[str | None, typer.Option("--json", help="With two work dirs: write the paired comparison "
                                                 "(delta, 95% interval, McNemar p per task) as JSON to this file "
                                                 "('-': stdout).")] = None,
) -> None:
    """One self-contained HTML page: scores, every row's prompt, answer and verdict, charts and run metadata."""
    from rich.console import Console

    from promptweave.cli.common import fail
    from promptweave.errors import PromptweaveError, ReportError
    from promptweave.report import write_report

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        if len(workdirs) > 2:
            raise ReportError("report takes one work dir, or two to compare", field="WORKDIR",
                              value=[str(w) for w in workdirs], expected="1 or 2 paths")
        if export_tables(workdirs, csv_out, md_out, err) and output is None:
            return
        if json_out and len(workdirs) != 2:
            raise ReportError("--json writes the comparison of two work dirs", field="WORKDIR",
                              value=[str(w) for w in workdirs], expected="two paths (A then B)")
        shared = compare_summary(workdirs[0], workdirs[1], json_out, err) if len(workdirs) == 2 else True
        inside = None  # the work dir the default page is written into: no planted link there is followed
        if output is None:
            inside = workdirs[0] if len(workdirs) == 1 else workdirs[1]
            output = inside / ("report.html" if len(workdirs) == 1 else "compare.html")
        if len(workdirs) == 1 and (workdirs[0] / "spread.json").is_file():  # spread hook: a spread's own page
            from promptweave.report.spread_page import write_spread_report

            path = write_spread_report(workdirs[0], output, root=inside)
        else:
            path = write_report(workdirs, output, root=inside)
    except PromptweaveError as exc:
        fail(err, exc)
    except OSError as exc:
        fail(err, ReportError(f"cannot write the report: {exc.strerror or exc}", file=str(output),
                              expected="a writable path for -o"))
    err.print(f"report written to {path} ({path.stat().st_size / 1e6:.2f} MB)", markup=False)
    if not shared:
        raise typer.Exit(1)


def compare_summary(a: Path, b: Path, json_out: str | None, err: Any) -> bool:
    """The paired comparison on the terminal (which tasks, their deltas and tests) and, with --json, as a file;
    whether the two runs share any task."""
    import json

    from promptweave.errors import NothingComparedWarning, warning_text
    from promptweave.report import load_workdir
    from promptweave.report.paired import compare_tasks, json_view, pair_tasks, terminal_lines

    wa, wb = load_workdir(a), load_workdir(b)
    entries, note = compare_tasks(wa, wb)
    shared = bool(pair_tasks(wa, wb).pairs)
    if not shared:
        def tasks(wd: Any) -> str:
            return "; ".join(f"{m} × {', '.join(t.dataset for t in wd.tasks if t.model == m)}" for m in wd.models)

        err.print("warning: " + warning_text(NothingComparedWarning(
            f"{a} and {b} share no task (dataset × model): A has {tasks(wa)}; B has {tasks(wb)}; nothing is "
            "compared (the page lists both runs)")), style="yellow", markup=False, soft_wrap=True)
    for line in terminal_lines(entries, note):
        err.print(line, markup=False)
    if json_out:
        text = json.dumps(json_view(entries, note), indent=2, ensure_ascii=False)
        if json_out == "-":
            sys.stdout.write(text + "\n")
        else:
            Path(json_out).parent.mkdir(parents=True, exist_ok=True)
            Path(json_out).write_text(text + "\n", encoding="utf-8")
            err.print(f"comparison written to {json_out}", markup=False)
    return shared


def export_tables(workdirs: list[Path], csv_out: str | None, md_out: str | None, err: Any) -> bool:
    """``--csv`` / ``--markdown``: the score table of one work dir; whether any was asked for."""
    from promptweave.errors import ReportError
    from promptweave.report import load_workdir, score_table, to_csv, to_markdown

    exports = [(dest, fmt) for dest, fmt in ((csv_out, to_csv), (md_out, to_markdown)) if dest]
    if not exports:
        return False
    if len(workdirs) != 1:
        raise ReportError("--csv / --markdown export one work dir's table", field="WORKDIR",
                          value=[str(w) for w in workdirs], expected="one path")
    table = score_table(load_workdir(workdirs[0]))
    for dest, fmt in exports:
        text = fmt(table)
        if dest == "-":
            sys.stdout.write(text)
        else:
            from promptweave.safe_files import write_atomic

            write_atomic(Path(dest), text)  # an exclusive temporary file renamed over the name
            err.print(f"score table written to {dest}", markup=False)
    return True
