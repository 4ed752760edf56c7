"""Nothing lost, nothing repeated: a worker killed mid-shard, and a driver killed with SIGKILL then rerun.

Requests are counted at the loopback server: a request answered once is never
sent again, and the results match a local run's.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from openai_stub import StubServer
from ray_helpers import cached, example, outputs, session, wait_until
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.config import load_config
from promptweave.run.executors import RunRequest
from promptweave.run.executors.ray_executor import RayExecutor

CONFIG = "run_openai_server.py"  # two datasets (57 rows) on one API model

pytestmark = pytest.mark.slow  # real Ray instances: about a minute per module


def local_baseline(tmp: Path, model_dir: Path) -> dict:
    with StubServer() as srv:
        (tmp / "baseline").mkdir()
        cfg = example(tmp / "baseline", CONFIG, srv.url, model_dir)
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp / "baseline" / "w"), "--no-progress"])
        assert res.exit_code == 0, res.output
    return outputs(tmp / "baseline" / "w")


def gone(pid: int, group: bool = False) -> bool:
    try:
        (os.killpg if group else os.kill)(pid, 0)
    except ProcessLookupError:
        return True
    return False


def kill(named: dict) -> None:
    """Kill a worker actor and wait until its process is gone (it can send nothing after this returns)."""
    import ray

    handle = ray.get_actor(named["name"], namespace=named["namespace"])
    pid = ray.get(handle.ready.remote(), timeout=120)["pid"]  # an async actor answers mid-shard
    ray.kill(handle)
    # ray.kill is asynchronous: a call sent at once may still be served, so wait for the process to go first
    wait_until(lambda: gone(pid), "the killed worker's process to exit")
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(handle.ready.remote(), timeout=120)


def test_killed_worker_loses_nothing_and_repeats_nothing(ray_instance, tiny_model_dir, tmp_path) -> None:
    import ray

    baseline = local_baseline(tmp_path, tiny_model_dir)
    work = tmp_path / "w"
    with StubServer(hold_after=12) as srv:
        cfg = example(tmp_path, CONFIG, srv.url, tiny_model_dir)
        executor = RayExecutor(shard_rows=4, workers=1)
        got: dict = {}
        runner = threading.Thread(target=lambda: got.update(out=executor.run(RunRequest(
            load_config(cfg), work, show_progress=False))))
        runner.start()
        assert srv.held.wait(120), "the run never reached the held request"
        wait_until(lambda: cached(work) == srv.total_answered, "every answered call to be cached")
        answered_before = set(srv.answered)
        victims = [a for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith("pw-worker-")]
        assert len(victims) == 1
        kill(victims[0])
        srv.release_hold()  # what the dead worker was waiting for is dropped; the rest is served
        runner.join(180)
        assert not runner.is_alive()
    assert executor.replaced == 1  # its shards went to a fresh worker
    assert executor.spawned == 2 and executor.shards_run == 15  # two model loads served all 15 shards
    assert all(o.ok and o.complete for o in got["out"])
    assert outputs(work) == baseline  # nothing lost: every row, same predictions and scores
    assert max(srv.answered.values()) == 1  # nothing answered twice
    assert all(srv.received[k] == 1 for k in answered_before)  # no completed request sent again
    assert len(srv.answered) == 57


def _run_cli(cfg: Path, work: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "promptweave", "run", str(cfg), "-w", str(work), "--executor", "ray",
           "--workers", "1", "--shard-rows", "4", "--no-progress"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "RAY_ADDRESS": ""})


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the killed run's processes in /proc")
def test_driver_killed_then_rerun_completes_without_repeats(ray_instance, tiny_model_dir, tmp_path) -> None:
    """The guarantee: an answer received and committed is never asked for again; a request in flight at the kill
    is sent once more by the rerun (its answer never came back); every request is answered once in all."""
    baseline = local_baseline(tmp_path, tiny_model_dir)
    work = tmp_path / "w"
    with StubServer(hold_after=20) as srv:
        cfg = example(tmp_path, CONFIG, srv.url, tiny_model_dir)
        proc = _run_cli(cfg, work)
        try:
            assert srv.held.wait(180), "the run never reached the held request"
            wait_until(lambda: cached(work) == srv.total_answered, "every answered call to be cached")
            committed = set(srv.answered)
            os.kill(proc.pid, signal.SIGKILL)  # the driver only
            proc.wait(30)
            # Ray's dashboard and runtime-env agents outlive a killed driver, in its process group: remove them
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            # the model worker and the coordinator, each in a group of its own, exit once their raylet is gone
            wait_until(lambda: not session(proc.pid), "the killed run's workers to exit")
        finally:
            proc.stdout.close()
            for pid in session(proc.pid):  # only if the wait above failed: what this test started, by pid
                os.kill(pid, signal.SIGKILL)
        assert proc.returncode == -signal.SIGKILL
        # nothing of the killed run is left that could send: what the server got from it is final
        first_run = srv.received.copy()
        assert set(srv.answered) == committed  # the held requests were never answered
        in_flight = set(first_run) - committed
        assert in_flight, "the kill should catch requests in flight"
        srv.release_hold()
        again = _run_cli(cfg, work)
        out, _ = again.communicate(timeout=300)
        assert again.returncode == 0, out.decode(errors="replace")[-3000:]
    assert outputs(work) == baseline
    rerun = srv.received - first_run
    assert not set(rerun) & committed  # a committed answer is never asked for again
    assert all(rerun[k] == 1 for k in in_flight)  # a request in flight at the kill: sent once more, only once
    assert all(v == 1 for v in rerun.values())
    assert set(srv.answered.values()) == {1} and len(srv.answered) == 57  # each request answered once in all


def test_shard_past_its_retries_fails_its_task_only_and_a_rerun_finishes(ray_instance, tiny_model_dir,
                                                                         tmp_path) -> None:
    import ray

    baseline = local_baseline(tmp_path, tiny_model_dir)
    work = tmp_path / "w"
    with StubServer(hold_after=12) as srv:
        cfg = example(tmp_path, CONFIG, srv.url, tiny_model_dir)
        executor = RayExecutor(shard_rows=4, workers=1, max_retries=0)  # a shard whose worker dies is not retried
        got: dict = {}
        runner = threading.Thread(target=lambda: got.update(out=executor.run(RunRequest(
            load_config(cfg), work, show_progress=False))))
        runner.start()
        assert srv.held.wait(120), "the run never reached the held request"
        wait_until(lambda: cached(work) == srv.total_answered, "every answered call to be cached")
        (victim,) = [a for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith("pw-worker-")]
        kill(victim)
        srv.release_hold()
        runner.join(180)
        assert not runner.is_alive()
        failed = [o for o in got["out"] if not o.ok]
        assert failed and all("[PW900]" in o.error and "worker died 1 times" in o.error for o in failed)
        committed = len(list((work / "shards").rglob("*.json")))
        assert 0 < committed < 15  # the other shards ran to the end and were kept
        again = RayExecutor(shard_rows=4, workers=1).run(RunRequest(load_config(cfg), work, show_progress=False))
    assert all(o.ok for o in again)
    assert outputs(work) == baseline
    assert max(srv.answered.values()) == 1
