"""The run report: a self-contained HTML page per work dir, run comparison, and score-table export."""
from promptweave.report.compare import changed_rows, score_deltas
from promptweave.report.page import build_compare, build_report, write_report
from promptweave.report.table import score_table, to_csv, to_markdown
from promptweave.report.workdir import TaskResult, WorkDir, iter_predictions, load_workdir

__all__ = ["build_report", "build_compare", "write_report", "score_table", "to_csv", "to_markdown",
           "load_workdir", "iter_predictions", "WorkDir", "TaskResult", "score_deltas", "changed_rows"]
