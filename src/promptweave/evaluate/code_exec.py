"""Running model-written code (code benchmarks' scoring): only on request, only in the OS sandbox.

Nothing runs unless the user passed ``--allow-code-exec``. Each program then runs in a fresh ``python -I -S``
inside the sandbox of :mod:`promptweave.evaluate.os_sandbox` (bubblewrap: no network, its own PID namespace, a clean
environment, a private tmpfs as the only writable place, no process creation, killed with the run; or, only when
the user names it, the weaker ``rlimits`` mode). Inside, ``setrlimit`` caps address space, CPU time, file size and
open files, and a wall-clock timeout kills the whole sandbox.

The verdict is decided here, not in the sandbox. The sandboxed process runs :data:`code_harness.HARNESS`: the
program, then the test's steps (:mod:`code_plan`), sending the value of each probe and whether a step raised;
:class:`code_verdict.Verdict` compares the values with expected values that never enter the sandbox. The process
holds no token, no report it could forge into a pass, and no helper names in the program's namespace.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from promptweave.errors import CodeExecutionError, CodeSandboxError
from promptweave.evaluate import os_sandbox
from promptweave.evaluate.code_harness import HARNESS
from promptweave.evaluate.code_plan import Step, expectations
from promptweave.evaluate.code_verdict import Verdict

FLAG = "--allow-code-exec"


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0
    memory_mb: int = 1024
    cpu_s: int = 10
    file_mb: int = 16
    disk_mb: int = 64  # the sandbox's private work folder (tmpfs), and as much again for its /tmp


@dataclass(frozen=True)
class Job:
    """One program and the steps of its test (``plain``: the test compares with ``==``; else type-aware)."""

    program: str
    steps: tuple[Step, ...] = ()
    plain: bool = False

    def run(self, limits: Limits, sandbox: str) -> str:
        return run_job(self, limits, sandbox)


def rlimits_of(lim: Limits) -> dict[str, int]:
    """Set by the harness itself before the program runs (no ``preexec_fn``: it is unsafe with threads)."""
    return {"RLIMIT_AS": lim.memory_mb * 1024 * 1024, "RLIMIT_CPU": lim.cpu_s,
            "RLIMIT_FSIZE": lim.file_mb * 1024 * 1024, "RLIMIT_CORE": 0, "RLIMIT_NOFILE": 64, "RLIMIT_NPROC": 0}


SANDBOX_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
MAX_OUTPUT = 32 << 20  # the probes' values, in all; a program that floods the report fails


def sandbox_of(ctx: Any) -> str:
    """The code sandbox an evaluation context asks for (``--code-sandbox``; bwrap when it says nothing)."""
    return getattr(ctx, "code_sandbox", None) or os_sandbox.DEFAULT_MODE


def ensure_sandbox(mode: str) -> None:
    """At run time, as at plan time: the bwrap sandbox must work here (no warning: that was given at plan time)."""
    os_sandbox.check_mode(mode, "code_sandbox")
    if mode == os_sandbox.BWRAP:
        why = os_sandbox.unavailable_reason()
        if why is not None:
            raise CodeSandboxError(f"--allow-code-exec runs model code only in an OS sandbox, and {why}",
                                   field=os_sandbox.FLAG, value=mode, expected=os_sandbox.INSTALL_HINT)


@dataclass
class _Reader:
    """Splits the report into lines and hands each to ``on_line`` until it decides."""

    on_line: Callable[[bytes], str | None]
    limit: int
    buf: bytearray = field(default_factory=bytearray)
    total: int = 0
    decided: str | None = None

    def add(self, chunk: bytes) -> str | None:
        self.total += len(chunk)
        if self.total > self.limit:
            return "flood"
        self.buf += chunk
        while self.decided is None and b"\n" in self.buf:
            i = self.buf.index(b"\n")
            line = bytes(self.buf[:i])
            del self.buf[:i + 1]
            self.decided = self.on_line(line)
        return "decided" if self.decided is not None else None


def _exchange(proc: subprocess.Popen, data: bytes, timeout: float, reader: _Reader) -> str | None:
    """Send ``data`` to stdin and read stdout into ``reader`` until EOF or its decision: ``None`` (read to the
    end), ``'decided'``, or ``'timeout'`` / ``'flood'`` when the wall clock ran out or the output passed its limit
    (the caller kills the sandbox)."""
    import selectors
    import time

    assert proc.stdin is not None and proc.stdout is not None
    deadline = time.monotonic() + timeout
    view = memoryview(data)
    with selectors.DefaultSelector() as sel:
        if data:
            sel.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        sel.register(proc.stdout, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            for key, _ in sel.select(left):
                if key.fileobj is proc.stdin:
                    try:
                        n = os.write(proc.stdin.fileno(), view[:1 << 16])
                    except (BrokenPipeError, OSError):
                        n = len(view)
                    view = view[n:]
                    if not view:
                        sel.unregister(proc.stdin)
                        try:
                            proc.stdin.close()
                        except OSError:
                            pass
                else:
                    chunk = os.read(proc.stdout.fileno(), 1 << 16)
                    if not chunk:
                        sel.unregister(proc.stdout)
                        continue
                    got = reader.add(chunk)
                    if got is not None:
                        return got
    left = max(0.0, deadline - time.monotonic())
    try:
        proc.wait(timeout=left)
    except subprocess.TimeoutExpired:
        return "timeout"
    return None


def run_job(job: Job, limits: Limits = Limits(), sandbox: str = os_sandbox.DEFAULT_MODE) -> str:
    """``pass``, ``wrong_answer`` (an assertion failed or a probe's value differs), ``failed`` (any other error or
    a limit hit) or ``timeout``. ``sandbox``: ``bwrap`` (the OS sandbox) or ``rlimits`` (only when the user asked
    for it)."""
    import json

    ensure_sandbox(sandbox)
    jail = os_sandbox.Jail(work_mb=limits.disk_mb, tmp_mb=limits.disk_mb)
    try:
        box = os_sandbox.start([sys.executable, "-I", "-S", "-c", HARNESS], sandbox, jail, SANDBOX_ENV)
    except OSError as exc:
        raise CodeExecutionError(f"the code sandbox could not start ({exc})", field="evaluator") from None
    verdict = Verdict(expectations(list(job.steps)))
    wire = {"program": job.program, "steps": [s.wire() for s in job.steps], "limits": rlimits_of(limits),
            "plain": job.plain}
    try:
        stopped = _exchange(box.proc, json.dumps(wire).encode("utf-8", "surrogatepass"), limits.timeout_s,
                            _Reader(verdict.feed, MAX_OUTPUT))
    finally:
        box.kill()
    if stopped == "decided":  # decided before the process ended: what it does after cannot change it
        return verdict.result or "failed"
    if stopped == "timeout" or box.proc.returncode in (124, -signal.SIGXCPU, 128 + signal.SIGXCPU):
        return "timeout"
    return "failed" if stopped is not None else (verdict.result or "failed")


def run_program(program: str, test: str = "", limits: Limits = Limits(), sandbox: str = os_sandbox.DEFAULT_MODE) -> str:
    """``program`` then ``test``, both run as written in the sandbox (no probes): see :func:`run_job`."""
    return run_job(Job(program, (Step("exec", test),) if test else ()), limits, sandbox)


class Runnable(Protocol):
    """A job ``run_many`` runs: :class:`Job`, or ``code_relay.RelayJob`` (two sandboxes)."""

    def run(self, limits: Limits, sandbox: str) -> str: ...


def run_many(jobs: Sequence[Runnable | tuple[str, str]], limits: Limits = Limits(), workers: int = 4,
             sandbox: str = os_sandbox.DEFAULT_MODE) -> list[str]:
    """Each job (a :class:`Runnable`, or ``(program, test)`` run as written) in its own sandbox, ``workers`` at
    once."""
    ensure_sandbox(sandbox)
    todo = [Job(j[0], (Step("exec", j[1]),) if j[1] else ()) if isinstance(j, tuple) else j for j in jobs]
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(todo) or 1))) as pool:
        return list(pool.map(lambda j: j.run(limits, sandbox), todo))


def require_flag(ctx: Any, who: str, where: str = "eval_cfg.evaluator.type") -> None:
    if ctx is None or not getattr(ctx, "allow_code_exec", False):
        raise CodeExecutionError(f"{who} runs the model's code; it only runs with {FLAG}", field=where, value=who,
                                 expected=f"promptweave run {FLAG} ... (code runs in the OS sandbox, bubblewrap)")


__all__ = ["FLAG", "Job", "Limits", "MAX_OUTPUT", "Runnable", "SANDBOX_ENV", "ensure_sandbox", "require_flag",
           "rlimits_of", "run_job", "run_many", "run_program", "sandbox_of"]
