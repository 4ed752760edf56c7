"""Reading a run's work dir: results, predictions and what is known about the run.

Tolerant by design: other parts of a run add fields (a failed row's ``error``, an LLM
judge's ``judge*`` fields, usage figures) and older runs lack some; a missing file or an
unreadable line is reported in the page, never a crash. A work dir with no results at all
is a :class:`~promptweave.errors.ReportError`.
"""
from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.errors import ReportError, WorkdirFileError
from promptweave.safe_files import confined, read_regular

# the summarizer's order for choosing a dataset's headline metric, and what it never shows
METRIC_ORDER = ("score", "auc_score", "accuracy", "humaneval_pass@1", "rouge1", "avg_toxicity_score", "bleurt_diff",
                "matthews_correlation", "truth", "f1", "exact_match", "extract_rate")
METRIC_SKIP = ("bp", "sys_len", "ref_len", "type")
_META_FILES = ("run.json", "meta.json", "manifest.json", "run_meta.json")


@dataclass
class TaskResult:
    """One dataset × model of a run, as its results file and predictions file describe it."""

    model: str
    dataset: str
    mode: str = "-"
    status: str = "missing"
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    version: str = "-"
    rows: int | None = None
    result: dict[str, Any] = field(default_factory=dict)  # the results file as written
    predictions: Path | None = None

    @property
    def key(self) -> str:
        return f"{self.model}/{self.dataset}"

    def ordered_metrics(self) -> list[str]:
        return sorted(self.metrics, key=lambda m: (METRIC_ORDER.index(m) if m in METRIC_ORDER else len(METRIC_ORDER),
                                                   list(self.metrics).index(m)))


@dataclass
class WorkDir:
    path: Path
    tasks: list[TaskResult]
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(t.model for t in self.tasks))

    @property
    def datasets(self) -> list[str]:
        return list(dict.fromkeys(t.dataset for t in self.tasks))

    def task(self, model: str, dataset: str) -> TaskResult | None:
        for t in self.tasks:
            if t.model == model and t.dataset == dataset:
                return t
        return None


# A work dir is input like any other: results and predictions may be edited, copied or hostile.
MAX_JSON_FILE_BYTES = 256_000_000
MAX_LINE_CHARS = 64_000_000  # one predictions row; a longer line is reported, not read


def _read_json(path: Path, problems: list[str], root: Path) -> Any:
    """A JSON file of the work dir, read only if it is a regular file inside it (links resolved) of bounded size."""
    try:
        return json.loads(read_regular(path, max_bytes=MAX_JSON_FILE_BYTES, root=root).decode("utf-8"))
    except WorkdirFileError as exc:
        problems.append(f"{path}: {exc.message}")
        return None
    except (OSError, ValueError) as exc:
        problems.append(f"{path}: unreadable ({exc})")
        return None
    except RecursionError:
        problems.append(f"{path}: unreadable (JSON nested too deeply)")
        return None


def _numeric(metrics: Any) -> dict[str, float]:
    if not isinstance(metrics, dict):
        return {}
    out = {}
    for k, v in metrics.items():
        if k in METRIC_SKIP or not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        try:
            out[str(k)] = float(v)
        except OverflowError:  # an integer past float range is no score: left out, as a non-number is
            continue
    return out


def _confined(path: Path | None, root: Path, problems: list[str]) -> Path | None:
    """``path`` if it is a regular file inside the work dir (links resolved), else None with the reason noted:
    the report embeds predictions only from its own work dir."""
    if path is None:
        return None
    try:
        return confined(path, root)
    except WorkdirFileError as exc:
        problems.append(f"{path}: predictions {exc.message}")
        return None


def load_workdir(path: str | Path) -> WorkDir:
    """Every task of a work dir (from ``results/``, ``predictions/`` and ``summary.json``) and the run's metadata."""
    root = Path(path)
    if not root.is_dir():
        raise ReportError("no work dir here", file=str(root), expected="the -w folder of a promptweave run")
    problems: list[str] = []
    tasks: dict[tuple[str, str], TaskResult] = {}
    summary = _read_json(root / "summary.json", problems, root) if _exists(root / "summary.json") else None
    # summary order first (the run's order), then whatever else results/ and predictions/ hold
    for entry in summary if isinstance(summary, list) else []:
        if isinstance(entry, dict) and entry.get("model") is not None and entry.get("dataset") is not None:
            t = tasks.setdefault((str(entry["model"]), str(entry["dataset"])),
                                 TaskResult(str(entry["model"]), str(entry["dataset"])))
            t.mode = str(entry.get("mode") or t.mode)
            t.metrics = _numeric(entry.get("metrics")) or t.metrics
            t.error = _text(entry.get("error"))
            t.status = "failed" if t.error else "done"
            t.rows = _count(entry.get("rows"))
            if isinstance(entry.get("predictions_path"), str):
                t.predictions = _path(entry["predictions_path"])
    by_file: dict[tuple[str, str], TaskResult] = {}  # results/<model>/<dataset>.json ↔ predictions/<model>/<dataset>.jsonl
    for f in sorted((root / "results").glob("*/*.json")):
        data = _read_json(f, problems, root)
        if not isinstance(data, dict):
            continue
        model, dataset = str(data.get("model") or f.parent.name), str(data.get("dataset") or f.stem)
        t = tasks.setdefault((model, dataset), TaskResult(model, dataset))
        by_file[(f.parent.name, f.stem)] = t
        t.result = data
        t.mode = str(data.get("mode") or t.mode)
        t.status = str(data.get("status") or ("failed" if data.get("error") else "done"))
        t.error = _text(data.get("error")) if t.status == "failed" else t.error
        # OpenCompass results hold the metrics at the top level; ours under "metrics"
        t.metrics = _numeric(data.get("metrics")) or _numeric(data) or t.metrics
        t.rows = _count(data.get("rows", t.rows))
        for key in ("version", "prompt_hash", "config_hash"):
            if data.get(key):
                t.version = str(data[key])[:6]
                break
        if isinstance(data.get("predictions"), str):
            t.predictions = _path(data["predictions"])
    for f in sorted((root / "predictions").glob("*/*.jsonl")):
        known = [t for t in tasks.values() if t.predictions is not None and _same(t.predictions, f, root)]
        if known:
            known[0].predictions = f
            continue
        t = by_file.get((f.parent.name, f.stem)) or next(
            (t for t in tasks.values() if _slug(t.model) == f.parent.name and _slug(t.dataset) == f.stem), None)
        if t is None:
            t = tasks.setdefault((f.parent.name, f.stem), TaskResult(f.parent.name, f.stem, status="no results"))
        t.predictions = f
    for t in tasks.values():  # a path from another machine or a moved work dir: look beside the results
        if t.predictions is not None and not _is_file(t.predictions):
            local = root / "predictions" / _slug(t.model) / f"{_slug(t.dataset)}.jsonl"
            t.predictions = local if _is_file(local) else None
        t.predictions = _confined(t.predictions, root, problems)
    if not tasks:
        raise ReportError("the work dir holds no results or predictions", file=str(root),
                          expected="a folder written by `promptweave run -w`")
    return WorkDir(root, list(tasks.values()), run_metadata(root, problems), problems)


def _exists(path: Path) -> bool:
    """Whether anything has this name (a link too: reading it then says why it is refused)."""
    try:
        return path.is_symlink() or path.exists()
    except (OSError, ValueError):
        return False


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else value if isinstance(value, str) else json.dumps(value, default=str)


def _count(value: Any) -> int | None:
    """A row count from a work dir file: a non-negative whole number, else unknown."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _path(text: str) -> Path | None:
    try:
        return Path(text) if text and "\0" not in text else None
    except (TypeError, ValueError):
        return None


def _slug(name: str) -> str:
    from promptweave.filenames import file_name  # the run's own file naming

    return file_name(name)


def _same(a: Path, b: Path, root: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a link loop
        return False


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _lines(fh: Any) -> Iterator[tuple[int, str | None]]:
    """(line number, text) per line; None for a line longer than MAX_LINE_CHARS, which is skipped unread."""
    n = 0
    while True:
        line = fh.readline(MAX_LINE_CHARS)
        if not line:
            return
        n += 1
        if len(line) >= MAX_LINE_CHARS and not line.endswith("\n"):
            while line and not line.endswith("\n"):  # drop the rest of the line in bounded pieces
                line = fh.readline(1 << 20)
            yield n, None
            continue
        yield n, line


def iter_predictions(path: Path | None, problems: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """The rows of a predictions file; an unreadable line becomes a row with its ``error`` (nothing is dropped)."""
    if path is None:
        return
    try:
        fh = open(path, encoding="utf-8", errors="replace")
    except OSError as exc:
        if problems is not None:
            problems.append(f"{path}: unreadable ({exc.strerror or exc})")
        return
    with fh:
        for n, line in _lines(fh):
            if line is None:
                why = f"longer than {MAX_LINE_CHARS} characters"
            elif not line.strip():
                continue
            else:
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    why = f"not JSON ({exc})"
                except RecursionError:
                    why = "JSON nested too deeply"
                else:
                    yield row if isinstance(row, dict) else {"index": None, "output": row}
                    continue
            if problems is not None:
                problems.append(f"{path}:{n}: {why}")
            yield {"index": None, "error": f"line {n} of the predictions file is unreadable: {why}"}


def run_metadata(root: Path, problems: list[str]) -> dict[str, Any]:
    """What the work dir says about the run: metadata files, the cache's calls, times and any usage reported."""
    import promptweave

    meta: dict[str, Any] = {"work dir": str(root.resolve()), "promptweave": promptweave.__version__}
    for name in _META_FILES:
        if _exists(root / name):
            data = _read_json(root / name, problems, root)
            if isinstance(data, dict):
                meta.update({str(k): v for k, v in data.items()})
    cache = root / "cache.sqlite"
    if _exists(cache):
        try:
            meta.update(_cache_facts(confined(cache, root)))
        except WorkdirFileError as exc:
            problems.append(f"{cache}: {exc.message}")
        except sqlite3.Error as exc:
            problems.append(f"{cache}: unreadable ({exc})")
    return meta


def finite_number(value: Any) -> float | None:
    """A number from a work dir file as a finite float, or None (text, booleans, NaN, infinities, huge ints)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        f = float(value)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _moment(value: Any) -> str | None:
    import datetime as dt

    seconds = finite_number(value)
    if seconds is None:
        return None
    try:
        return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return None


def _cache_facts(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    from urllib.parse import quote

    con = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    try:
        models = con.execute("SELECT model, kind, COUNT(*), MIN(created), MAX(created) FROM responses "
                             "GROUP BY model, kind").fetchall()
        usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "cost": 0.0}
        seen = False
        for (resp,) in con.execute("SELECT response FROM responses WHERE response LIKE '%usage%' "
                                   "OR response LIKE '%cost%'"):
            try:
                data = json.loads(resp)
            except (TypeError, ValueError):
                continue
            except RecursionError:
                continue
            for item in data if isinstance(data, list) else [data]:
                u = item.get("usage") if isinstance(item, dict) else None
                if isinstance(u, dict):
                    seen = True
                    for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
                        n = finite_number(u.get(k))
                        if n is not None:
                            usage[k] += int(n)
                    cost = finite_number(u.get("cost"))
                    if cost is not None:
                        usage["cost"] += cost
    finally:
        con.close()
    if models:
        out["cached calls"] = sum(m[2] for m in models)
        times = [t for m in models for t in (m[3], m[4]) if _moment(t) is not None]
        if times:  # a cache's times are data too: text, or far past the calendar, is left out
            out["first call"] = _moment(min(times))
            out["last call"] = _moment(max(times))
        out["models answering (cache)"] = sorted({str(m[0]) for m in models})
    if seen:
        out["tokens"] = {k: v for k, v in usage.items() if k != "cost"}
        if usage["cost"]:
            out["cost"] = usage["cost"]
    return out
