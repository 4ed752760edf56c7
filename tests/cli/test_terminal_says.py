"""What the terminal says happened: a dead endpoint, failed rows, warnings, Ctrl-C, a compare of unrelated runs.

Real processes and real loopback sockets; nothing waits on a clock: the Ctrl-C test synchronises on the stand-in
server holding a request, and the dead-endpoint test counts attempts rather than timing them.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from openai_stub import Fault, StubServer

from promptweave.errors import EndpointDownError
from promptweave.models.base import GenerationParams
from promptweave.models.openai_compat import UNREACHABLE_AFTER, OpenAICompatModel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "run_openai_server.py"


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connections are refused
    return port


def example(tmp_path: Path, url: str) -> Path:
    shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")
    cfg = tmp_path / "cfg.py"
    cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", url).replace("retry=6", "retry=6"))
    return cfg


def promptweave(*args: object, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "promptweave", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=kw.pop("cwd", None), timeout=kw.pop("timeout", 300), **kw)


def test_a_closed_port_stops_the_model_after_a_few_attempts_not_seven_per_row() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    m = OpenAICompatModel(url, "m", concurrency=4, max_retries=6, backoff_base=0.0, timeout=5.0)
    with pytest.raises(EndpointDownError) as info:
        m.chat([[{"role": "user", "content": f"q{i}"}] for i in range(30)], GenerationParams())
    assert url in info.value.message and "Connection refused" in info.value.message
    assert m.stats.sent <= UNREACHABLE_AFTER + 4  # not 30 rows × 7 attempts
    # the next batch of the same model fails on its first attempt
    before = m.stats.sent
    with pytest.raises(EndpointDownError):
        m.chat([[{"role": "user", "content": "again"}]], GenerationParams())
    assert m.stats.sent == before + 1


def test_a_run_against_a_dead_endpoint_fails_fast_says_why_and_writes_no_done(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    res = promptweave("run", example(tmp_path, url), "-w", tmp_path / "w", "--no-progress", "--no-report",
                      cwd=tmp_path)
    assert res.returncode not in (0, 5), res.stderr
    assert "Traceback" not in res.stderr
    assert f"cannot reach {url}" in res.stderr and "Connection refused" in res.stderr
    statuses = [json.loads(p.read_text())["status"] for p in (tmp_path / "w" / "results").glob("*/*.json")]
    assert statuses and "done" not in statuses


def test_failed_rows_are_counted_with_their_causes_and_warnings_are_one_line(tmp_path: Path) -> None:
    rows = [json.loads(x) for x in (ROOT / "examples/data/science_mc.jsonl").read_text().splitlines()]
    bad = [json.dumps(r["question"])[1:-1] for r in rows[:2]]

    def faults(key: str, attempt: int, body: dict) -> Fault | None:
        text = json.dumps(body)
        return Fault("status", 422, message="Unexpected fields: ignore_eos") if any(q in text for q in bad) else None

    with StubServer(faults=faults) as srv:
        res = promptweave("run", example(tmp_path, srv.url), "-w", tmp_path / "w", "--no-progress",
                          "--no-report", "-d", "science_mc", cwd=tmp_path)
    assert res.returncode == 3, res.stderr  # rows failed; a rerun retries them
    warning_lines = [ln for ln in res.stderr.splitlines() if ln.startswith("warning: ")]
    assert warning_lines and all(ln.startswith("warning: [PW") for ln in warning_lines), res.stderr
    assert "warnings.warn" not in res.stderr and not any(".py:" in ln and "Warning:" in ln
                                                         for ln in res.stderr.splitlines())
    assert "http_422 ×" in res.stderr and "Unexpected fields: ignore_eos" in res.stderr
    result = json.loads(next((tmp_path / "w" / "results").glob("*/science_mc.json")).read_text())
    assert result["status"] == "partial" and result["row_error_causes"][0]["kind"] == "http_422"
    assert "partial" in res.stdout


def test_ctrl_c_says_what_is_kept_and_that_the_same_command_resumes(tmp_path: Path) -> None:
    with StubServer(hold_after=5) as srv:
        cfg = example(tmp_path, srv.url)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
        cmd = [sys.executable, "-m", "promptweave", "run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress",
               "--no-report", "-d", "science_mc"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                cwd=tmp_path)
        assert srv.held.wait(120), "the run never reached the held request"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "answer(s) are kept in" in err and "rerun the same command to resume" in err


def test_a_compare_of_runs_with_nothing_in_common_warns_and_fails(tmp_path: Path) -> None:
    for name, model, ds in (("A", "m1", "d1"), ("B", "m2", "d2")):
        (tmp_path / name / "results" / model).mkdir(parents=True)
        (tmp_path / name / "results" / model / f"{ds}.json").write_text(json.dumps(
            {"dataset": ds, "model": model, "status": "done", "metrics": {"accuracy": 50.0}}))
    (tmp_path / "A" / "results" / "m1" / "d1b.json").write_text(json.dumps(
        {"dataset": "d1b", "model": "m1", "status": "done", "metrics": {"accuracy": 50.0}}))
    res = promptweave("report", tmp_path / "A", tmp_path / "B", "-o", tmp_path / "c.html")
    assert res.returncode == 1, res.stderr
    assert "warning: [PW773]" in res.stderr and "share no task" in res.stderr
