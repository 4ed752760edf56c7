"""Writing ``WORKDIR/report.html`` at the end of ``promptweave run`` (a report problem never fails the run)."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def report_after_run(workdir: str | Path, console: Any, err: Any) -> Path | None:
    from promptweave.errors import PromptweaveError
    from promptweave.report.page import write_report

    try:
        path = write_report([workdir], Path(workdir) / "report.html")
    except (PromptweaveError, OSError) as exc:
        err.print(f"warning: no report written: {exc}", style="yellow", markup=False, soft_wrap=True)
        return None
    console.print(f"report: {path}")
    return path
