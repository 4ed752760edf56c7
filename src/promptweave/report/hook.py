"""Writing ``WORKDIR/report.html`` at the end of ``promptweave run`` (a report problem never fails the run)."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def report_after_run(workdir: str | Path, console: Any, err: Any) -> Path | None:
    from promptweave.report.page import write_report

    try:
        path = write_report([workdir], Path(workdir) / "report.html", root=workdir)  # no planted link followed
    except Exception as exc:  # noqa: BLE001 - the run's results are safe on disk; a report problem must not fail it
        err.print(f"warning: no report written ({type(exc).__name__}: {exc}); "
                  f"retry with: promptweave report {workdir}", style="yellow", markup=False, soft_wrap=True)
        return None
    console.print(f"report: {path}")
    return path
