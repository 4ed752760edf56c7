"""``--address``: a run joins a Ray cluster someone else started (``ray start --head``, real, on loopback).

The head runs in a session of its own with a temp dir and auth token of its own, and is stopped through its
own process (never ``ray stop``, which would stop every Ray instance on the machine).
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from openai_stub import StubServer
from ray_helpers import example, outputs, session, wait_until
from typer.testing import CliRunner

from promptweave.cli.app import app

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the head's processes in /proc")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def head():
    """A Ray head node on loopback; yields (address, env a client needs to join it)."""
    # short: Ray's unix socket paths under the temp dir must stay under 108 bytes
    tmp = Path(tempfile.mkdtemp(prefix="pw-ray-"))
    token = tmp / "token"
    token.write_text(secrets.token_hex(32))
    # a cluster started with ray start asks for a token; an explicit address never turns token mode on by itself
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token), "RAY_ADDRESS": "",
           "RAY_USAGE_STATS_ENABLED": "0"}
    port = free_port()
    ports = {flag: free_port() for flag in ("--dashboard-agent-listen-port",
                                            "--dashboard-agent-grpc-port", "--runtime-env-agent-port",
                                            "--metrics-export-port", "--node-manager-port", "--object-manager-port")}
    log = tmp / "head.log"
    cmd = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block", "--node-ip-address=127.0.0.1",
           f"--port={port}", "--num-cpus=2", f"--temp-dir={tmp / 'ray'}", "--include-dashboard=false",
           "--disable-usage-stats", *(f"{k}={v}" for k, v in ports.items())]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        wait_until(lambda: "Ray runtime started" in log.read_text() or proc.poll() is not None,
                   "the Ray head to start")
        assert proc.poll() is None, log.read_text()[-3000:]
        yield f"127.0.0.1:{port}", env
    finally:
        proc.send_signal(signal.SIGTERM)  # ray start --block stops the head's processes when it is stopped
        proc.wait(60)
        wait_until(lambda: not session(proc.pid), "the head's processes to exit")
        shutil.rmtree(tmp, ignore_errors=True)


def test_address_joins_a_running_cluster_with_the_local_results(head, tiny_model_dir, tmp_path) -> None:
    address, env = head
    with StubServer() as srv:
        cfg = example(tmp_path, "run_openai_server.py", srv.url, tiny_model_dir)
        local = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "local"), "--no-progress"])
        assert local.exit_code == 0, local.output
        sent_local = srv.received.copy()
        srv.received.clear()
        driver = subprocess.run([sys.executable, "-m", "promptweave", "run", str(cfg), "-w", str(tmp_path / "ray"),
                                 "--executor", "ray", "--address", address, "--shard-rows", "8", "--no-progress"],
                                capture_output=True, text=True, env=env, timeout=300)
        assert driver.returncode == 0, (driver.stdout + driver.stderr)[-3000:]
        sent_ray = srv.received.copy()
    assert outputs(tmp_path / "ray") == outputs(tmp_path / "local")
    assert sent_ray == sent_local  # the same requests, each as many times
    # the run was a job of that cluster (it did not start a Ray of its own), and it has ended
    probe = ("import json, ray; ray.init(address=%r, log_to_driver=False); import ray._private.state as s; "
             "print(json.dumps([[j['DriverPid'], j['IsDead']] for j in s.jobs()]))" % address)
    jobs = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert jobs.returncode == 0, jobs.stderr[-3000:]
    ended = [pid for pid, dead in json.loads(jobs.stdout.strip().splitlines()[-1]) if dead]
    assert len(ended) == 1  # the run's driver (the probe is the live one)


def test_an_unreachable_address_is_refused_at_once(tmp_path, tiny_model_dir) -> None:
    cfg = example(tmp_path, "run_openai_server.py", "http://127.0.0.1:9/v1", tiny_model_dir)
    port = free_port()  # nothing listens there
    res = subprocess.run([sys.executable, "-m", "promptweave", "run", str(cfg), "-w", str(tmp_path / "w"),
                          "--executor", "ray", "--address", f"127.0.0.1:{port}", "--no-progress"],
                         capture_output=True, text=True, env={**os.environ, "RAY_ADDRESS": ""}, timeout=120)
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert f"[PW900] --address: could not join the Ray cluster: nothing answers at 127.0.0.1:{port}" in out
