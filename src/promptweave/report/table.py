"""The dataset × model score table, in the shape of OpenCompass's summarizer output.

Columns: ``dataset, version, metric, mode`` then one per model; scores as ``{:.2f}``, ``-``
where a model has no score. Unlike the summarizer, which keeps one metric per dataset,
every numeric metric gets its row (the summarizer's headline metric first).
"""
from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from promptweave.report.workdir import WorkDir

Table = list[list[str]]


def score_table(wd: WorkDir, models: Sequence[str] | None = None) -> Table:
    """Header row then one row per (dataset, metric)."""
    models = list(models or wd.models)
    table: Table = [["dataset", "version", "metric", "mode", *models]]
    for ds in wd.datasets:
        tasks = [wd.task(m, ds) for m in models]
        metrics: list[str] = []
        for t in tasks:
            for name in (t.ordered_metrics() if t else []):
                if name not in metrics:
                    metrics.append(name)
        present = [t for t in tasks if t is not None]
        version = next((t.version for t in present if t.version != "-"), "-")
        modes = {t.mode for t in present if t.mode != "-"}
        mode = modes.pop() if len(modes) == 1 else ("mixed" if modes else "-")
        if not metrics:
            table.append([ds, "-", "-", "-", *["-"] * len(models)])
            continue
        for metric in metrics:
            cells = []
            for t in tasks:
                v = t.metrics.get(metric) if t else None
                cells.append("-" if v is None else f"{v:.2f}")
            table.append([ds, version, metric, mode, *cells])
    return table


def to_csv(table: Table) -> str:
    buf = io.StringIO()
    plain = csv.writer(buf, lineterminator="\n")
    quoted = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)  # the minimal quoting misses a bare \r
    for row in table:
        (quoted if any("\r" in c for c in row) else plain).writerow(row)
    return buf.getvalue()


def to_markdown(table: Table) -> str:
    def esc(cell: str) -> str:  # one table row per line, whatever a dataset or model name holds
        return " ".join(cell.replace("\\", "\\\\").replace("|", "\\|").splitlines()) or " "

    lines = ["| " + " | ".join(esc(c) for c in table[0]) + " |",
             "|" + "|".join(["-----"] * len(table[0])) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in table[1:]]
    return "\n".join(lines) + "\n"


def headline(wd: WorkDir) -> list[tuple[str, str, str, float]]:
    """(dataset, model, metric, score) with each task's headline metric, for charts."""
    out = []
    for t in wd.tasks:
        names = t.ordered_metrics()
        if names:
            out.append((t.dataset, t.model, names[0], t.metrics[names[0]]))
    return out
