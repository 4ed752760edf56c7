"""Resumable runs: SIGKILL at several points, rerun, same predictions, nothing answered twice.

The loopback server stands in for a remote OpenAI-protocol service; it counts every
request it receives and answers, per request.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from openai_stub import StubServer

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"


def _spawn(url: str, workdir: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)])}
    return subprocess.Popen([sys.executable, str(HERE / "toy_run.py"), url, str(workdir)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _predictions(workdir: Path) -> dict[str, str]:
    return {p.relative_to(workdir).as_posix(): p.read_text() for p in sorted((workdir / "predictions").rglob("*.jsonl"))}


def test_killed_run_resumes_without_repeating_work(tmp_path) -> None:
    total_requests = 10 + 4 * 4  # gen rows + ppl label prompts
    with StubServer() as ref:
        proc = _spawn(ref.url, tmp_path / "ref")
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out.decode()
        assert ref.total_answered == total_requests
    expected = _predictions(tmp_path / "ref")
    assert len(expected) == 2

    work = tmp_path / "resumed"
    kills = 0
    with StubServer(hold_after=4) as srv:
        # kill points: inside the gen task, then twice inside the ppl task
        for hold_after in (4, 15, 21):
            srv.hold_after = hold_after
            srv.held.clear()
            proc = _spawn(srv.url, work)
            assert srv.held.wait(timeout=120), "the run never reached the kill point"
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
            kills += 1
        assert not (work / "predictions" / "stub-model" / "toy-ppl.jsonl").exists()
        srv.hold_after = None
        proc = _spawn(srv.url, work)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out.decode()

        assert _predictions(work) == expected
        assert len(srv.answered) == total_requests
        assert max(srv.answered.values()) == 1  # nothing answered was ever asked again
        # only the one request held in flight at each kill was sent a second time
        assert srv.total_received == total_requests + kills
        assert sorted(srv.received.values()).count(2) == kills
