"""The files a perf run writes, in AISBench's layout: ``performances/<model>/<stem>.csv`` (per-request statistics),
``<stem>.json`` (run-level metrics), ``<stem>_details.jsonl`` (one line per request), and, when the run had a
steady-state stage, ``<stem>_stable.csv`` / ``<stem>_stable.json`` (the same for that stage, ``Stage`` = stable).
Every level also adds one line of plain numbers to ``<work dir>/performances/perf_index.jsonl`` for the pages.
"""
from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from promptweave.errors import RunError
from promptweave.filenames import file_name
from promptweave.run.perf.measure import RequestResult
from promptweave.run.perf.stats import CSV_HEADER, STATS, StageFigures

INDEX_FILE = "perf_index.jsonl"


def csv_text(fig: StageFigures) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(CSV_HEADER)
    for metric, stats in fig.rows.items():
        w.writerow([metric, fig.name, *[stats[k] for k in STATS], stats["N"]])
    return buf.getvalue()


def json_text(fig: StageFigures) -> str:
    return json.dumps({k: {fig.name: v} for k, v in fig.common.items()}, indent=4, ensure_ascii=False)


def _write(path: Path, text: str) -> None:
    """Write via a fresh temporary file renamed over ``path`` (a link at ``path`` is replaced, never followed)."""
    tmp = path.with_name(path.name + ".partial")
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise RunError(f"cannot write the perf results: {exc.strerror}", file=str(path),
                       expected="a writable work dir (-w)") from None


def details_lines(results: Sequence[RequestResult], start: float, stable: set[int]) -> str:
    out = []
    for r in results:
        line: dict[str, Any] = {"request": r.index, "row": r.row, "success": r.ok,
                                "start_time": round(r.start - start, 6), "end_time": round(r.end - start, 6)}
        if r.ok:
            line.update(e2el_ms=round(r.e2el * 1000, 4), ttft_ms=round(r.ttft * 1000, 4),
                        tpot_ms=round(r.tpot * 1000, 4), itl_count=r.itl_count, content_events=r.content_events,
                        input_tokens=r.input_tokens, input_tokens_from=r.input_source,
                        output_tokens=r.output_tokens, output_tokens_from=r.output_source,
                        output_token_throughput=round(r.throughput, 4))
        else:
            line["error"] = r.error
        line.update(in_flight_at_send=r.in_flight, stable=r.index in stable)
        out.append(json.dumps(line, ensure_ascii=False))
    return "\n".join(out) + ("\n" if out else "")


def write_level(workdir: Path, model: str, dataset: str, level_suffix: str, total: StageFigures,
                stable_fig: StageFigures | None, results: Sequence[RequestResult], start: float, stable: set[int],
                index_line: dict) -> list[Path]:
    """Write one level's files (named ``<dataset><level_suffix>``: the suffix is ``@c<N>`` in a sweep)."""
    folder = Path(workdir) / "performances" / file_name(model)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunError(f"cannot create the perf folder: {exc.strerror}", file=str(folder),
                       expected="a writable work dir (-w)") from None
    base = file_name(dataset) + level_suffix
    written = []
    for suffix, text in ((".csv", csv_text(total)), (".json", json_text(total)),
                         ("_details.jsonl", details_lines(results, start, stable))):
        path = folder / f"{base}{suffix}"
        _write(path, text)
        written.append(path)
    for old in ("_stable.csv", "_stable.json"):  # a rerun without a steady state leaves none from before
        p = folder / f"{base}{old}"
        if stable_fig is None and (p.exists() or p.is_symlink()):
            p.unlink()
    if stable_fig is not None:
        for suffix, text in (("_stable.csv", csv_text(stable_fig)), ("_stable.json", json_text(stable_fig))):
            path = folder / f"{base}{suffix}"
            _write(path, text)
            written.append(path)
    _append_index(Path(workdir) / "performances" / INDEX_FILE, index_line)
    return written


def _append_index(path: Path, line: dict) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise RunError(f"cannot write the perf index: {exc.strerror}", file=str(path),
                       expected="a writable work dir (-w)") from None

