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
from typing import Any

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


def _rlimits(lim: Limits) -> dict[str, int]:
    """Set by the harness itself before the program runs (no ``preexec_fn``: it is unsafe with threads)."""
    return {"RLIMIT_AS": lim.memory_mb * 1024 * 1024, "RLIMIT_CPU": lim.cpu_s,
            "RLIMIT_FSIZE": lim.file_mb * 1024 * 1024, "RLIMIT_CORE": 0, "RLIMIT_NOFILE": 64, "RLIMIT_NPROC": 0}


_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
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
        box = os_sandbox.start([sys.executable, "-I", "-S", "-c", HARNESS], sandbox, jail, _ENV)
    except OSError as exc:
        raise CodeExecutionError(f"the code sandbox could not start ({exc})", field="evaluator") from None
    verdict = Verdict(expectations(list(job.steps)))
    wire = {"program": job.program, "steps": [s.wire() for s in job.steps], "limits": _rlimits(limits),
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


@dataclass(frozen=True)
class RelayJob:
    """A test that cannot be split into probes (loops, random inputs, helper calls), run without the program in
    its process: ``test`` runs in one sandbox with ``prelude`` (the task's own code, e.g. HumanEval's prompt) and
    calls ``check(<stand-in>)``; each call of the stand-in is relayed by the judge to a second sandbox running
    ``program``, which answers with the value of ``entry`` on those arguments. The test's sandbox reports the
    verdict, and no model code runs there: the program can only answer calls, as a function returning values."""

    program: str
    entry: str
    prelude: str
    test: str
    check: str = "check"
    setup_failure: str = ""  # the result when the program fails before it can answer (else as it failed)


class _Lines:
    """A child's stdout read as lines, capped in total."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd, self.limit, self.buf, self.total, self.eof = fd, limit, bytearray(), 0, False

    def read(self) -> list[bytes] | None:
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
            return []
        self.total += len(chunk)
        if self.total > self.limit:
            return None
        self.buf += chunk
        out = []
        while b"\n" in self.buf:
            i = self.buf.index(b"\n")
            out.append(bytes(self.buf[:i]))
            del self.buf[:i + 1]
        return out


def _record(line: bytes) -> dict | None:
    import json

    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) and len(rec) == 1 else None


def run_relay(job: RelayJob, limits: Limits = Limits(), sandbox: str = os_sandbox.DEFAULT_MODE) -> str:
    """``pass``, ``wrong_answer``, ``failed`` or ``timeout`` for a :class:`RelayJob` (see there)."""
    import json
    import selectors
    import time

    from promptweave.evaluate.code_verdict import BadRecord, decode

    ensure_sandbox(sandbox)
    lim = _rlimits(limits)
    jail = os_sandbox.Jail(work_mb=limits.disk_mb, tmp_mb=limits.disk_mb)
    boxes: list[os_sandbox.Sandboxed] = []
    try:
        try:
            for _ in range(2):
                boxes.append(os_sandbox.start([sys.executable, "-I", "-S", "-c", HARNESS], sandbox, jail, _ENV))
        except OSError as exc:
            raise CodeExecutionError(f"the code sandbox could not start ({exc})", field="evaluator") from None
        jobs = ({"mode": "serve", "program": job.program, "entry": job.entry, "steps": [], "limits": lim,
                 "plain": True},
                {"mode": "judge", "program": job.prelude, "test": job.test, "check": job.check, "steps": [],
                 "limits": lim, "plain": True})
        pending: dict[int, bytearray] = {}
        for box in boxes:
            assert box.proc.stdin is not None and box.proc.stdout is not None
        for box, wire in zip(boxes, jobs):
            fd = box.proc.stdin.fileno()  # type: ignore[union-attr]
            os.set_blocking(fd, False)
            pending[fd] = bytearray(json.dumps(wire).encode("utf-8", "surrogatepass") + b"\n")
        p_out, j_out = (b.proc.stdout.fileno() for b in boxes)  # type: ignore[union-attr]
        p_in, j_in = (b.proc.stdin.fileno() for b in boxes)  # type: ignore[union-attr]
        out = {fd: _Lines(fd, MAX_OUTPUT) for fd in (p_out, j_out)}
        from collections import deque

        waiting: deque[int] = deque()  # the calls the test's sandbox sent, in order, not answered yet
        program_gone = False
        program_ready = False
        deadline = time.monotonic() + limits.timeout_s

        def reply(data: bytes) -> None:
            pending[j_in] += data + b"\n"

        with selectors.DefaultSelector() as sel:
            sel.register(p_out, selectors.EVENT_READ)
            sel.register(j_out, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return "timeout"
                for fd in (p_in, j_in):  # what is owed to a sandbox is written as its pipe takes it
                    if pending.get(fd):
                        try:
                            n = os.write(fd, pending[fd][:1 << 16])
                        except BlockingIOError:
                            n = 0
                        except OSError:
                            n = len(pending[fd])
                        del pending[fd][:n]
                wants = [fd for fd in (p_in, j_in) if pending.get(fd)]
                for fd in (p_in, j_in):
                    try:
                        sel.unregister(fd)
                    except KeyError:
                        pass
                for fd in wants:
                    sel.register(fd, selectors.EVENT_WRITE)
                ready = sel.select(min(left, 1.0))
                for key, _ in ready:
                    fd = key.fd
                    if fd not in out:
                        continue
                    lines = out[fd].read()
                    if lines is None:
                        return "failed"  # flooded
                    if out[fd].eof:
                        sel.unregister(fd)
                        if fd == j_out:
                            return "failed"  # the test's sandbox ended without a verdict
                        program_gone = True
                        reply(b'{"ready": 0}')
                        while waiting:
                            reply(json.dumps({"n": waiting.popleft(), "gone": 1}).encode())
                    for line in lines:
                        rec = _record(line)
                        if rec is None:
                            continue
                        (key_, val), = rec.items()
                        if fd == j_out:
                            if key_ == "done":
                                return "pass"
                            if key_ == "x":
                                return "wrong_answer" if val == "assert" else "failed"
                            if key_ == "call" and isinstance(val, dict) and isinstance(val.get("n"), int):
                                if program_gone:
                                    reply(json.dumps({"n": val["n"], "gone": 1}).encode())
                                else:
                                    waiting.append(val["n"])
                                    pending[p_in] += json.dumps({"a": val.get("a"), "k": val.get("k")}).encode() + b"\n"
                        elif key_ == "x" and not program_ready:  # the program failed before it could answer
                            return job.setup_failure or ("wrong_answer" if val == "assert" else "failed")
                        elif key_ == "ready" and not program_ready:
                            program_ready = True
                            reply(b'{"ready": 1}')
                        elif key_ in ("v", "r") and waiting:
                            if key_ == "v":
                                try:
                                    decode(val)
                                except BadRecord:
                                    rec = {"r": "RuntimeError"}
                            elif not isinstance(val, str) or not val.isidentifier():
                                rec = {"r": "RuntimeError"}
                            reply(json.dumps({"n": waiting.popleft(), **rec}).encode())
    finally:
        for box in boxes:
            box.kill()


def run_program(program: str, test: str = "", limits: Limits = Limits(), sandbox: str = os_sandbox.DEFAULT_MODE) -> str:
    """``program`` then ``test``, both run as written in the sandbox (no probes): see :func:`run_job`."""
    return run_job(Job(program, (Step("exec", test),) if test else ()), limits, sandbox)


def run_many(jobs: Sequence[Job | RelayJob | tuple[str, str]], limits: Limits = Limits(), workers: int = 4,
             sandbox: str = os_sandbox.DEFAULT_MODE) -> list[str]:
    """Each job (a :class:`Job`, a :class:`RelayJob`, or ``(program, test)`` run as written) in its own sandbox,
    ``workers`` at once."""
    ensure_sandbox(sandbox)
    todo = [j if isinstance(j, (Job, RelayJob)) else Job(j[0], (Step("exec", j[1]),) if j[1] else ()) for j in jobs]

    def one(j: Job | RelayJob) -> str:
        return run_relay(j, limits, sandbox) if isinstance(j, RelayJob) else run_job(j, limits, sandbox)

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(todo) or 1))) as pool:
        return list(pool.map(one, todo))


def require_flag(ctx: Any, who: str, where: str = "eval_cfg.evaluator.type") -> None:
    if ctx is None or not getattr(ctx, "allow_code_exec", False):
        raise CodeExecutionError(f"{who} runs the model's code; it only runs with {FLAG}", field=where, value=who,
                                 expected=f"promptweave run {FLAG} ... (code runs in the OS sandbox, bubblewrap)")


__all__ = ["FLAG", "Job", "Limits", "MAX_OUTPUT", "RelayJob", "ensure_sandbox", "require_flag", "run_job",
           "run_many", "run_program", "run_relay", "sandbox_of"]
