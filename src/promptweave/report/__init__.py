"""The run report: a self-contained HTML page per work dir, run comparison, and score-table export."""
from promptweave.report.compare import changed_rows, score_deltas
from promptweave.report.page import build_compare, build_report, write_report
from promptweave.report.table import score_table, to_csv, to_markdown
from promptweave.report.workdir import (
           TaskResult,
           WorkDir,
           iter_predictions,
           load_workdir,
)

__all__ = [
           "TaskResult",
           "WorkDir",
           "build_compare",
           "build_report",
           "changed_rows",
           "iter_predictions",
           "load_workdir",
           "score_deltas",
           "score_table",
           "to_csv",
           "to_markdown",
           "write_report",
]
