"""Checks before Ray is asked to start or join, so a wrong address or a starved machine is a typed error in
seconds, not a hang of minutes or a startup timeout with a traceback.

- :func:`probe_address`: something must listen at ``host:port`` *and* answer as Ray's head does: its GCS is
  a gRPC (HTTP/2) server, which answers the HTTP/2 connection preface with a SETTINGS frame. A plain TCP
  listener, an HTTP/1 server or an SSH daemon does not, and Ray itself would wait for minutes.
- :func:`check_local_start`: a local Ray needs memory for its GCS, raylet and workers; with less than
  :data:`MIN_START_BYTES` available (the machine's ``MemAvailable``, or the cgroup's headroom) it is refused
  before starting, naming what is short.
- :func:`start_failure`: when Ray still fails to start, the typed error says why it likely did (memory,
  ``/dev/shm``) with the figures, rather than Ray's bare ``timed out during startup``.
"""
from __future__ import annotations

import os
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from promptweave.errors import DistributedError

PROBE_SECONDS = 3.0
MIN_START_BYTES = 512 * 2**20  # GCS + raylet + one worker, measured at ~350 MB on Ray 2.x
MIN_SHM_BYTES = 80 * 2**20  # Ray's smallest object store (78,643,200 bytes)
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_H2_EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # length 0, type SETTINGS, no flags, stream 0
_SETTINGS = 0x04


def _split(address: str) -> tuple[str, int] | None:
    host, sep, port = address.strip().rpartition(":")
    if not sep or not port.isdigit() or "://" in address or not host:
        return None  # "auto", ray://..., or a form Ray resolves itself
    return host.strip("[]"), int(port)


def probe_address(address: str, timeout: float = PROBE_SECONDS) -> None:
    """Refuse ``address`` at once unless a Ray head (a gRPC server) answers there."""
    parts = _split(address)
    if parts is None:
        return
    hint = "check the address (ray start --head prints it) and that the head is up"
    try:
        conn = socket.create_connection(parts, timeout=timeout)
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise DistributedError(f"could not join the Ray cluster: nothing answers at {address} ({why}); {hint}",
                               field="--address", value=address) from None
    if os.environ.get("RAY_USE_TLS", "").strip() in ("1", "true", "True"):
        conn.close()  # a TLS head answers nothing in plain text; the TCP check is all we can do here
        return
    try:
        kind = _http2_answer(conn, timeout)
    finally:
        conn.close()
    if kind != "http2":
        raise DistributedError(f"could not join the Ray cluster: something listens at {address} but it is not a Ray "
                               f"head ({kind}); a Ray head's GCS answers gRPC (HTTP/2) at once; {hint}",
                               field="--address", value=address)


def _http2_answer(conn: socket.socket, timeout: float) -> str:
    """"http2" when the peer answers the HTTP/2 preface with a SETTINGS frame; else what it did instead."""
    deadline = time.monotonic() + timeout
    try:
        conn.sendall(_H2_PREFACE + _H2_EMPTY_SETTINGS)
        head = b""
        while len(head) < 9:
            left = deadline - time.monotonic()
            if left <= 0:
                return f"no HTTP/2 answer within {timeout:g} s"
            conn.settimeout(left)
            chunk = conn.recv(9 - len(head))
            if not chunk:
                return "it closed the connection" if not head else "it answered something other than HTTP/2"
            head += chunk
    except socket.timeout:
        return f"no HTTP/2 answer within {timeout:g} s"
    except OSError as exc:
        return f"the connection failed: {exc.strerror or type(exc).__name__}"
    if head[3] == _SETTINGS and head[5:9] == b"\x00\x00\x00\x00":
        return "http2"
    shown = head.decode("latin-1").split("\r")[0][:40]
    return f"it answered {shown!r}, not HTTP/2"


@dataclass(frozen=True)
class HostMemory:
    """What a local Ray could use: bytes of memory available (machine or cgroup, the smaller) and free /dev/shm."""

    available: int | None
    cgroup_headroom: int | None
    shm_free: int | None

    @property
    def usable(self) -> int | None:
        known = [v for v in (self.available, self.cgroup_headroom) if v is not None]
        return min(known) if known else None

    def describe(self) -> str:
        parts = []
        if self.available is not None:
            parts.append(f"{self.available / 2**20:.0f} MiB of memory available")
        if self.cgroup_headroom is not None:
            parts.append(f"{self.cgroup_headroom / 2**20:.0f} MiB left under this container's memory limit")
        if self.shm_free is not None:
            parts.append(f"{self.shm_free / 2**20:.0f} MiB free in /dev/shm")
        return ", ".join(parts) or "memory figures unavailable"


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def host_memory(root: Path = Path("/")) -> HostMemory:
    """The figures :func:`check_local_start` decides on (``root`` lets tests point at a fake ``/proc``/``/sys``)."""
    available = None
    try:
        for line in (root / "proc" / "meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        pass
    headroom = None
    cg = root / "sys" / "fs" / "cgroup"
    for limit_file, used_file in ((cg / "memory.max", cg / "memory.current"),
                                  (cg / "memory" / "memory.limit_in_bytes", cg / "memory" / "memory.usage_in_bytes")):
        limit, used = _read_int(limit_file), _read_int(used_file)
        if limit is not None and used is not None and limit < 2**60:  # "max" or v1's huge number: no limit
            headroom = max(limit - used, 0)
            break
    try:
        shm = shutil.disk_usage(root / "dev" / "shm").free
    except OSError:
        shm = None
    return HostMemory(available, headroom, shm)


def check_local_start(memory: HostMemory | None = None) -> HostMemory:
    """Refuse to start a local Ray that cannot come up for lack of memory; returns the figures."""
    mem = memory or host_memory()
    usable = mem.usable
    if usable is not None and usable < MIN_START_BYTES:
        raise DistributedError(f"not starting a local Ray: {mem.describe()}, and Ray needs at least "
                               f"{MIN_START_BYTES // 2**20} MiB to start its processes; free memory, raise the "
                               "container's memory limit, join a running cluster with --address, or use "
                               "--executor local", field="--executor", value="ray")
    return mem


def start_failure(exc: BaseException, address: str | None, memory: HostMemory | None = None) -> DistributedError:
    """The typed error for a Ray that did not start or join, naming the likely cause with the figures."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if address:
        return DistributedError(f"could not join the Ray cluster: {message}", field="--address", value=address)
    mem = memory or host_memory()
    causes = []
    if mem.usable is not None and mem.usable < 2 * MIN_START_BYTES:
        causes.append("too little memory")
    if mem.shm_free is not None and mem.shm_free < MIN_SHM_BYTES:
        causes.append("/dev/shm too small for Ray's object store (a container's default 64 MiB is; run it with "
                      "a larger --shm-size)")
    why = "; likely cause: " + " and ".join(causes) if causes else ""
    return DistributedError(f"could not start Ray: {message} ({mem.describe()}){why}; free memory, join a running "
                            "cluster with --address, or use --executor local", field="--executor", value="ray")


__all__ = ["MIN_SHM_BYTES", "MIN_START_BYTES", "PROBE_SECONDS", "HostMemory", "check_local_start", "host_memory",
           "probe_address", "start_failure"]
