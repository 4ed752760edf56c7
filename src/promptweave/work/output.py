"""Where a run's files go and how they are written: names made safe for paths, atomic replacement, JSONL lines.

Below every module that writes into a work dir (the executors, the forms that write their own files), so none of
them reaches into another for these.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from promptweave import safe_files
from promptweave.filenames import file_name


def safe_name(name: str) -> str:
    """A model or dataset name as one path component (long names shortened with a hash: promptweave/filenames.py)."""
    return file_name(name)


def predictions_path(workdir: Path, task: Any) -> Path:
    return workdir / "predictions" / safe_name(task.model_name) / f"{safe_name(task.dataset)}.jsonl"


def results_path(workdir: Path, task: Any) -> Path:
    return workdir / "results" / safe_name(task.model_name) / f"{safe_name(task.dataset)}.json"


def write_atomic(path: Path, text: str, *, root: Path | None = None) -> None:
    """Replace ``path`` with ``text`` at once, never through a planted link (promptweave/safe_files.py);
    ``root``, the work dir, has every folder between it and ``path`` checked too."""
    # backslashreplace turns a lone surrogate into its JSON escape (\udXXX), which reads back the same
    safe_files.write_atomic(path, text, root=root, errors="backslashreplace")


def jsonl(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, default=str) + "\n"


def failure_causes(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Failed rows grouped by kind, most frequent first: each kind's count and its first message (one line)."""
    groups: dict[str, dict[str, Any]] = {}
    for e in errors:
        kind = str(e.get("kind", "error"))
        g = groups.setdefault(kind, {"kind": kind, "count": 0, "first": " ".join(str(e.get("message", "")).split())[:200]})
        g["count"] += 1
    return sorted(groups.values(), key=lambda g: -g["count"])


def causes_text(causes: list[dict[str, Any]]) -> str:
    """``connection ×30 (first: ...)`` for each group, as the terminal shows them."""
    return "; ".join(f"{c['kind']} ×{c['count']} ({c['first']})" if c.get("first") else f"{c['kind']} ×{c['count']}"
                     for c in causes)


def failure_summary(errors: list[dict[str, Any]]) -> dict[str, int]:
    """How many failed rows of each kind."""
    kinds: dict[str, int] = {}
    for e in errors:
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    return kinds
