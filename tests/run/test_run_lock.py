"""One writer per work dir: concurrent ``promptweave run`` processes on one work dir (real subprocesses,
real HTTP to the loopback stand-in server)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from openai_stub import StubServer
from test_run_cli import API_MODEL, QUESTIONS, write_config

from promptweave.cli.common import ExitCode
from promptweave.run.lock import workdir_lock

SRC = Path(__file__).resolve().parents[2] / "src"


def _spawn(cfg: Path, work: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-m", "promptweave", "run", str(cfg), "-w", str(work), "--no-progress",
                             *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _config(folder: Path, url: str, n: int = 40) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cfg = write_config(folder, "mcq_gen", API_MODEL.format(url=url))
    rows = [dict(q, question=f"{q['question']} ({i})") for i in range(n // len(QUESTIONS)) for q in QUESTIONS]
    (folder / "mcq.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return cfg


def _predictions(work: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((work / "predictions").rglob("*.jsonl"))}


def test_three_concurrent_runs_send_each_request_once_and_agree(tmp_path) -> None:
    with StubServer(latency=0.01) as ref:
        proc = _spawn(_config(tmp_path / "ref", ref.url), tmp_path / "ref" / "w")
        proc.communicate(timeout=300)
        assert proc.returncode == 0
        distinct = len(ref.received)
    expected = _predictions(tmp_path / "ref" / "w")

    work = tmp_path / "shared" / "w"
    with StubServer(latency=0.01) as srv:
        cfg = _config(tmp_path / "shared", srv.url)
        procs = [_spawn(cfg, work) for _ in range(3)]
        results = [p.communicate(timeout=300) for p in procs]
        codes = [p.returncode for p in procs]
        assert codes == [0, 0, 0], results
        assert "Traceback" not in "".join(out + err for out, err in results)
        assert srv.total_received == distinct and max(srv.received.values()) == 1  # no request went out twice
    assert _predictions(work) == expected
    assert not [p for p in work.rglob("*") if p.name.endswith((".tmp", ".partial"))]


def test_a_second_run_waits_with_a_message_or_refuses_with_no_wait(tmp_path) -> None:
    work = tmp_path / "w"
    with StubServer() as srv:
        cfg = _config(tmp_path, srv.url, n=5)
        with workdir_lock(work):  # another writer holds the work dir
            refused = _spawn(cfg, work, "--no-wait")
            _out, err = refused.communicate(timeout=120)
            assert refused.returncode == ExitCode.LOCKED
            assert err.count("\n") == 1 and err.startswith("error: [PW710]") and str(work) in err
            waiting = _spawn(cfg, work)
            line = waiting.stderr.readline()  # blocks until the waiting run says so
            assert "waiting for another run" in line and f"pid {os.getpid()}" in line
            assert srv.total_received == 0
        _out, err = waiting.communicate(timeout=120)  # the lock is free: it runs
        assert waiting.returncode == 0, err
        assert srv.total_received == 5
