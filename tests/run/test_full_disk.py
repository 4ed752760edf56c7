"""A full disk during a run is ``[PW720] … no space left``, and the same command rerun once space is freed
completes with the same predictions as a run that never ran short.

The disk is real: a 4 MB tmpfs mounted in a user and mount namespace (``unshare -rm``), filled to leave a few
kilobytes; the run is the toy run against the loopback stand-in server.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from openai_stub import StubServer
from toy_run import toy_tasks

from promptweave.run import run_tasks

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE), str(HERE.parent / "servers")])}


def _can_mount() -> str | None:
    if shutil.which("unshare") is None:
        return "no unshare(1) on this machine"
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d"],
                           capture_output=True, text=True)
    if probe.returncode:
        return f"cannot mount a tmpfs in a user namespace here: {probe.stderr.strip()[:200]}"
    return None


_WHY = _can_mount()
needs_mount = pytest.mark.skipif(_WHY is not None, reason=_WHY or "")


def _predictions(work: Path) -> dict[str, str]:
    return {p.relative_to(work).as_posix(): p.read_text() for p in sorted(work.rglob("*.jsonl"))}


@needs_mount
@pytest.mark.parametrize("free", [0, 16_384, 131_072])
def test_a_full_disk_is_a_typed_error_and_the_rerun_resumes(tmp_path, free) -> None:
    with StubServer() as ref:
        run_tasks(toy_tasks(ref.url), tmp_path / "ref", show_progress=False)
    expected = _predictions(tmp_path / "ref" / "predictions")
    with StubServer() as srv:
        got = subprocess.run(["unshare", "-rm", sys.executable, str(HERE / "full_disk_run.py"), srv.url,
                              str(tmp_path / "full"), str(free)], env=ENV, capture_output=True, text=True,
                             timeout=300)
    assert got.returncode == 0, got.stderr[-2000:]
    first, second = got.stdout.strip().splitlines()
    assert "[PW720]" in first and "no space left" in first and "rerun the same command" in first, first
    assert second == "ok", got.stdout + got.stderr[-2000:]
    assert "moved aside" not in got.stderr  # the cache was whole: nothing set aside
    assert _predictions(tmp_path / "full" / "predictions") == expected


@needs_mount
def test_files_written_on_a_full_disk_keep_the_old_file_and_leave_no_temporary(tmp_path) -> None:
    got = subprocess.run(["unshare", "-rm", sys.executable, str(HERE / "full_disk_run.py"), "--files",
                          str(tmp_path)], env=ENV, capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr[-2000:]
    page, journal, kept, left = got.stdout.strip().splitlines()
    for line in (page, journal):
        assert line.startswith("error: [PW720]") and "no space left" in line, line
    assert kept == "kept: old page"
    assert left == "left: ['p.jsonl.partial', 'report.html']"  # the journal is rewritten by the rerun
