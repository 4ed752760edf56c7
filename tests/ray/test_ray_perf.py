"""``perf --executor ray``: one level's load from two Ray client processes, merged into one run's files."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run" / "perf"))

from test_perf_run import CSV_HEADER, read_csv, write_config  # noqa: E402
from timed_stream import TimedStreamServer, Timing  # noqa: E402

from promptweave.cli.app import app  # noqa: E402

pytestmark = pytest.mark.slow  # a real Ray instance


def test_two_client_processes_make_one_level(ray_instance, tmp_path) -> None:
    with TimedStreamServer(Timing(t0=0.002, t1=0.001, tokens=6)) as server:
        cfg = write_config(tmp_path, server.port)
        work = tmp_path / "w"
        res = CliRunner().invoke(app, ["perf", str(cfg), "-w", str(work), "--concurrency", "4", "--executor", "ray",
                                       "--workers", "2", "--no-progress"])
        assert res.exit_code == 0, res.output
        assert server.truth.requests == 12  # 4 x 4 requests, or every row (12) if fewer
    folder = work / "performances" / "svc"
    common = json.loads((folder / "qa@c4.json").read_text())
    assert common["Total Requests"]["total"] == 12 and common["Failed Requests"]["total"] == 0
    assert common["Max Concurrency"]["total"] == 4 and common["Total Generated Tokens"]["total"] == 72
    assert read_csv(folder / "qa@c4.csv")[0] == CSV_HEADER
    details = [json.loads(x) for x in (folder / "qa@c4_details.jsonl").read_text().splitlines()]
    assert [d["request"] for d in details] == list(range(12))  # re-numbered in start order across workers
    assert sorted(d["row"] for d in details) == list(range(12))
    assert [d["start_time"] for d in details] == sorted(d["start_time"] for d in details)
    assert all(d["itl_count"] == 5 and d["ttft_ms"] <= d["e2el_ms"] for d in details)
