"""``--executor ray`` keeps the local run's reliability: failed rows recorded and scored per ``--on-row-error``
(same files, same exit code, a rerun sends only those rows), and the work dir's lock held for the whole run
(real local Ray, real HTTP to the loopback stand-in server)."""
from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import pytest
from openai_stub import Fault, StubServer
from ray_helpers import outputs
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.cli.common import ExitCode
from promptweave.errors import PromptweaveWarning
from promptweave.run.lock import workdir_lock

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "run"))
from test_run_cli import API_MODEL, write_config

pytestmark = pytest.mark.slow  # real Ray instances


def run(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-progress"])


def _warns_failed_rows(mode: str):
    """The failed row is named on the way out, unless the run fails outright."""
    if mode == "fail":
        return contextlib.nullcontext()
    how = "scored as wrong" if mode == "wrong" else "left out of the metrics"
    return pytest.warns(PromptweaveWarning, match=rf"mcq-gen: 1 row\(s\) failed and were {how}")


def _refuse(question: str, fault: Fault):
    def plan(key, attempt, body):
        return fault if question in json.dumps(body.get("messages")) else None
    return plan


@pytest.mark.parametrize("mode, code", [("wrong", ExitCode.FAILED_ROWS), ("skip", ExitCode.FAILED_ROWS),
                                        ("fail", ExitCode.FAILURES)])
def test_failed_rows_are_recorded_and_scored_as_locally(mode, code, ray_instance, tmp_path) -> None:
    with StubServer(answer=lambda body: "The answer is B.",
                    faults=_refuse("Water boils", Fault("status", 400, message="context too long"))) as srv:
        cfg = write_config(tmp_path, "mcq_gen", API_MODEL.format(url=srv.url))
        with _warns_failed_rows(mode):
            local = run(str(cfg), "-w", str(tmp_path / "local"), "--on-row-error", mode)
        with _warns_failed_rows(mode):
            ray_run = run(str(cfg), "-w", str(tmp_path / "ray"), "--on-row-error", mode, "--executor", "ray",
                          "--shard-rows", "2")
    assert local.exit_code == code, local.output
    assert ray_run.exit_code == code, ray_run.output
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "local")
    rows = [json.loads(x) for x in (tmp_path / "ray" / "predictions" / "api" / "mcq-gen.jsonl").read_text()
            .splitlines()]
    assert [r["index"] for r in rows] == [0, 1, 2, 3, 4]
    assert rows[1]["error"]["kind"] == "http_400" and rows[1]["prediction"] is None


def test_a_rerun_sends_only_the_failed_rows(ray_instance, tmp_path) -> None:
    work = tmp_path / "w"
    with StubServer(answer=lambda body: "The answer is B.",
                    faults=_refuse("Water boils", Fault("status", 400, message="context too long"))) as srv:
        cfg = write_config(tmp_path, "mcq_gen", API_MODEL.format(url=srv.url))
        with _warns_failed_rows("wrong"):
            first = run(str(cfg), "-w", str(work), "--executor", "ray", "--shard-rows", "2")
        assert first.exit_code == ExitCode.FAILED_ROWS, first.output
        srv.faults = None
        srv.log.clear()
        again = run(str(cfg), "-w", str(work), "--executor", "ray", "--shard-rows", "2")
        assert again.exit_code == ExitCode.OK, again.output
        assert len(srv.log) == 1 and "Water boils" in json.dumps(srv.log[0]["body"])  # only the failed row
        clean = run(str(cfg), "-w", str(tmp_path / "clean"))  # a local run that never saw the fault
        assert clean.exit_code == ExitCode.OK, clean.output
    assert outputs(work) == outputs(tmp_path / "clean")
    assert not list((work / "shards").rglob("*.retry.json"))  # the shard is now committed as done


def test_no_wait_refuses_a_locked_work_dir_and_sends_nothing(tmp_path) -> None:
    work = tmp_path / "w"
    with StubServer() as srv:
        cfg = write_config(tmp_path, "mcq_gen", API_MODEL.format(url=srv.url))
        with workdir_lock(work):
            res = run(str(cfg), "-w", str(work), "--executor", "ray", "--no-wait")
        assert res.exit_code == ExitCode.LOCKED, res.output
        assert "work dir" in res.output
        assert srv.total_received == 0
    assert not (work / "results").exists() and not (work / "shards").exists()
