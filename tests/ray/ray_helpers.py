"""Shared by the Ray executor tests: the bundled examples pointed at loopback models, and result comparison."""
from __future__ import annotations

import json
import math
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(tmp: Path, name: str, url: str, model_dir: Path) -> Path:
    """A bundled example config, its API models at ``url`` and its local models at the tiny LM."""
    shutil.copytree(EXAMPLES / "data", tmp / "data", dirs_exist_ok=True)
    text = (EXAMPLES / name).read_text()
    text = text.replace("http://127.0.0.1:8000/v1", url).replace("path/to/a/local/model", str(model_dir))
    out = tmp / name
    out.write_text(text)
    return out


def outputs(workdir: Path) -> dict[str, object]:
    """Every results and predictions file, the results without the work-dir path they name."""
    got: dict[str, object] = {}
    for p in sorted((workdir / "results").rglob("*.json")):
        res = json.loads(p.read_text())
        res.pop("predictions", None)
        got[str(p.relative_to(workdir))] = res
    for p in sorted((workdir / "predictions").rglob("*.jsonl")):
        got[str(p.relative_to(workdir))] = p.read_text()
    return got


def differences(a: object, b: object, path: str = "", rel: float = 1e-6) -> list[str]:
    """Where two parsed outputs differ: exactly, but for floats, which may differ in the last bits when rows are
    batched differently (shards change a batch's padding) — to ``rel``, as the local backends promise."""
    if isinstance(a, float) and isinstance(b, (int, float)) or isinstance(b, float) and isinstance(a, (int, float)):
        return [] if math.isclose(a, b, rel_tol=rel, abs_tol=1e-9) else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}", rel)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]", rel)]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def parsed_outputs(workdir: Path) -> dict[str, object]:
    """:func:`outputs` with each predictions file read as its list of rows."""
    return {k: [json.loads(line) for line in v.splitlines()] if k.endswith(".jsonl") else v
            for k, v in outputs(workdir).items()}


def cached(workdir: Path) -> int:
    path = workdir / "cache.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path, timeout=30) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        except sqlite3.OperationalError:  # the table is not created yet
            return 0


def wait_until(cond, what: str, timeout: float = 120.0) -> None:
    """Poll a condition the system under test makes true (not a sleep standing in for it)."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def session(sid: int) -> list[int]:
    """The live processes of a session: a run started in its own session, with every Ray process it started.

    Ray puts each worker in a process group of its own, so the session, not the group, is what holds all of them.
    """
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[3]) == sid and stat[0] not in "ZX":  # fields: state, ppid, pgrp, session
                pids.append(int(entry.name))
    return pids
