"""Issue 22, item 6: ``--address`` where something other than Ray listens is refused in seconds, and a local Ray
that cannot start is a typed error naming why (memory, /dev/shm).

The listeners are real sockets on 127.0.0.1. A machine short of memory cannot be made here without starving the
other work on it, so the start-failure test uses a double for ``ray.init`` (named below) and fake /proc and /sys
files; the probe of a real Ray head is in test_ray_address.py (``head`` fixture).
"""
from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import DistributedError
from promptweave.run.executors import ray_preflight
from promptweave.run.executors.ray_preflight import HostMemory, check_local_start, host_memory, probe_address

CONFIG = """
datasets = [dict(abbr='d', rows=[dict(q='1+1', a='2')],
                 reader_cfg=dict(input_columns=['q'], output_column='a'),
                 infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{q}'),
                                retriever=dict(type='ZeroRetriever'), inferencer=dict(type='GenInferencer')),
                 eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]
models = [dict(abbr='m', type='OpenAISDK', path='gpt', openai_api_base='http://127.0.0.1:9/v1')]
"""


class Listener:
    """A TCP server on loopback that accepts and then stays silent, answers ``reply``, or hangs up."""

    def __init__(self, reply: bytes | None = None, hang_up: bool = False) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.reply, self.hang_up = reply, hang_up
        self.conns: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            if self.hang_up:
                conn.close()
                continue
            if self.reply is not None:
                conn.sendall(self.reply)
            self.conns.append(conn)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for c in self.conns:
            c.close()
        self.sock.close()


@pytest.mark.parametrize("kind", ["silent", "http1", "ssh", "hang_up"])
def test_a_listener_that_is_not_ray_is_refused(kind):
    replies = {"silent": None, "http1": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
               "ssh": b"SSH-2.0-OpenSSH_9.6\r\n", "hang_up": None}
    server = Listener(replies[kind], hang_up=kind == "hang_up")
    try:
        with pytest.raises(DistributedError, match="not a Ray head") as err:
            probe_address(server.address, timeout=1.0)
        assert err.value.code == "PW900" and server.address in str(err.value)
    finally:
        server.close()


def test_an_http2_server_passes_the_probe():
    # what a gRPC server sends first: its SETTINGS frame (type 4, stream 0)
    server = Listener(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64")
    try:
        assert probe_address(server.address, timeout=1.0) is None  # no DistributedError: the head is accepted
    finally:
        server.close()


def test_nothing_listening_is_refused():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    address = f"127.0.0.1:{s.getsockname()[1]}"
    s.close()
    with pytest.raises(DistributedError, match="nothing answers"):
        probe_address(address)


def test_run_with_an_address_where_a_plain_tcp_listener_is(tmp_path):
    pytest.importorskip("ray")
    server = Listener()
    cfg = tmp_path / "c.py"
    cfg.write_text(CONFIG)
    try:
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--executor", "ray",
                                       "--address", server.address, "--no-progress"])
    finally:
        server.close()
    assert res.exit_code == 2, res.output
    assert "[PW900]" in res.output and "not a Ray head" in res.output


def _fake_root(tmp: Path, available_kb: int, limit: int | None = None, used: int = 0) -> Path:
    (tmp / "proc").mkdir(parents=True)
    (tmp / "proc" / "meminfo").write_text(f"MemTotal: 99999999 kB\nMemAvailable: {available_kb} kB\n")
    cg = tmp / "sys" / "fs" / "cgroup"
    cg.mkdir(parents=True)
    (cg / "memory.max").write_text("max\n" if limit is None else f"{limit}\n")
    (cg / "memory.current").write_text(f"{used}\n")
    (tmp / "dev" / "shm").mkdir(parents=True)
    return tmp


def test_memory_figures_from_proc_and_the_cgroup(tmp_path):
    mem = host_memory(_fake_root(tmp_path, 8 * 2**20, limit=2**30, used=900 * 2**20))
    assert mem.available == 8 * 2**30 and mem.cgroup_headroom == 2**30 - 900 * 2**20
    assert mem.usable == mem.cgroup_headroom and mem.shm_free is not None


def test_too_little_memory_is_refused_before_starting(tmp_path):
    mem = host_memory(_fake_root(tmp_path, 8 * 2**20, limit=2**30, used=2**30 - 100 * 2**20))
    with pytest.raises(DistributedError, match="not starting a local Ray: .*100 MiB left under this container"):
        check_local_start(mem)
    assert check_local_start(HostMemory(4 * 2**30, None, 2**30)).usable == 4 * 2**30


def test_a_local_ray_that_does_not_start_names_why(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    cfg = tmp_path / "c.py"
    cfg.write_text(CONFIG)

    def init_that_times_out(*args, **kwargs):  # double: Ray's startup on a memory-starved node
        raise Exception("The current node timed out during startup. This could happen because some of the Ray "
                        "processes failed to startup.")

    monkeypatch.setattr(ray, "init", init_that_times_out)
    monkeypatch.setattr(ray_preflight, "host_memory", lambda root=None: HostMemory(600 * 2**20, None, 60 * 2**20))
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--executor", "ray", "--no-progress"])
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert "[PW900]" in out and "could not start Ray: The current node timed out during startup" in out
    assert "too little memory" in out and "/dev/shm too small" in out and "60 MiB free in /dev/shm" in out
