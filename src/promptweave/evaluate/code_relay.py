"""Tests that cannot be split into probes, judged where no model code runs: two sandboxes and a relay between them.

The test (a HumanEval ``check`` with random inputs, MBPP+'s EvalPlus checker) runs in one sandbox with only the
task's own code; the model's program runs in the other. The test calls a stand-in for the program's entry point;
each call's arguments go to the judge (this module), which passes them to the program's sandbox and its answer
back, both as the tagged JSON of :mod:`promptweave.evaluate.code_verdict`. The test's sandbox reports the verdict.
The program's sandbox can only answer calls: what else it writes is ignored, and an answer it sends unasked is
dropped. Calls carry numbers, so an answer that comes after its call gave up (a per-input time limit) is skipped.
"""
from __future__ import annotations

import json
import os
import selectors
import sys
import time
from collections import deque
from dataclasses import dataclass

from promptweave.errors import CodeExecutionError
from promptweave.evaluate import os_sandbox
from promptweave.evaluate.code_exec import MAX_OUTPUT, SANDBOX_ENV, Limits, ensure_sandbox, rlimits_of
from promptweave.evaluate.code_harness import HARNESS
from promptweave.evaluate.code_verdict import BadRecord, decode


@dataclass(frozen=True)
class RelayJob:
    """``test`` runs with ``prelude`` (the task's own code, e.g. HumanEval's prompt) and calls ``check(<stand-in>)``;
    the stand-in's calls are answered by ``program``'s ``entry`` in the other sandbox. ``setup_failure``: the
    result when the program fails before it can answer (else ``wrong_answer`` for an assertion, ``failed``)."""

    program: str
    entry: str
    prelude: str
    test: str
    check: str = "check"
    setup_failure: str = ""

    def run(self, limits: Limits, sandbox: str) -> str:
        return run_relay(self, limits, sandbox)


class _Lines:
    """A child's stdout read as lines, capped in total."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd, self.limit, self.buf, self.total, self.eof = fd, limit, bytearray(), 0, False

    def read(self) -> list[bytes] | None:
        """The whole lines that came (``[]`` at the end, ``eof`` set), or ``None`` past the cap."""
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


def _record(line: bytes) -> tuple[str, object] | None:
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(rec, dict) or len(rec) != 1:
        return None
    (key, val), = rec.items()
    return key, val


class _Relay:
    """One relayed run: ``program`` and ``test`` are the two sandboxes; ``step`` handles what came, and returns the
    verdict once there is one."""

    def __init__(self, job: RelayJob, program: os_sandbox.Sandboxed, test: os_sandbox.Sandboxed) -> None:
        self.job = job
        pipes = []
        for box in (program, test):
            assert box.proc.stdin is not None and box.proc.stdout is not None
            pipes.append((box.proc.stdin.fileno(), box.proc.stdout.fileno()))
            os.set_blocking(pipes[-1][0], False)
        (self.p_in, self.p_out), (self.t_in, self.t_out) = pipes
        self.owed = {self.p_in: bytearray(), self.t_in: bytearray()}  # written as each pipe takes it
        self.lines = {fd: _Lines(fd, MAX_OUTPUT) for fd in (self.p_out, self.t_out)}
        self.calls: deque[int] = deque()  # the test's calls not answered yet, in order
        self.program_ready = False
        self.program_gone = False

    def send(self, fd: int, rec: dict) -> None:
        self.owed[fd] += json.dumps(rec).encode("utf-8", "surrogatepass") + b"\n"

    def flush(self) -> list[int]:
        """Write what each sandbox is owed, as far as its pipe takes it; the pipes still owed something."""
        for fd, data in self.owed.items():
            if data:
                try:
                    n = os.write(fd, data[:1 << 16])
                except BlockingIOError:
                    n = 0
                except OSError:  # that sandbox has ended
                    n = len(data)
                del data[:n]
        return [fd for fd, data in self.owed.items() if data]

    def from_test(self, key: str, val: object) -> str | None:
        if key == "done":
            return "pass"
        if key == "x":
            return "wrong_answer" if val == "assert" else "failed"
        if key == "call" and isinstance(val, dict) and isinstance(val.get("n"), int):
            if self.program_gone:
                self.send(self.t_in, {"n": val["n"], "gone": 1})
            else:
                self.calls.append(val["n"])
                self.send(self.p_in, {"a": val.get("a"), "k": val.get("k")})
        return None

    def from_program(self, key: str, val: object) -> str | None:
        if key == "x" and not self.program_ready:  # it failed before it could answer a call
            return self.job.setup_failure or ("wrong_answer" if val == "assert" else "failed")
        if key == "ready" and not self.program_ready:
            self.program_ready = True
            self.send(self.t_in, {"ready": 1})
        elif key in ("v", "r") and self.calls:
            answer = {key: val}
            if key == "v":
                try:
                    decode(val)
                except BadRecord:
                    answer = {"r": "RuntimeError"}
            elif not isinstance(val, str) or not val.isidentifier():
                answer = {"r": "RuntimeError"}
            self.send(self.t_in, {"n": self.calls.popleft(), **answer})
        return None

    def program_ended(self) -> None:
        self.program_gone = True
        self.send(self.t_in, {"ready": 0})
        while self.calls:
            self.send(self.t_in, {"n": self.calls.popleft(), "gone": 1})

    def step(self, fd: int) -> str | None:
        got = self.lines[fd].read()
        if got is None:
            return "failed"  # flooded
        for line in got:
            rec = _record(line)
            if rec is not None:
                verdict = (self.from_test if fd == self.t_out else self.from_program)(*rec)
                if verdict is not None:
                    return verdict
        if self.lines[fd].eof:
            if fd == self.t_out:
                return "failed"  # the test's sandbox ended without a verdict
            self.program_ended()
        return None


def run_relay(job: RelayJob, limits: Limits = Limits(), sandbox: str = os_sandbox.DEFAULT_MODE) -> str:
    """``pass``, ``wrong_answer``, ``failed`` or ``timeout`` for a :class:`RelayJob` (see there)."""
    ensure_sandbox(sandbox)
    lim = rlimits_of(limits)
    jail = os_sandbox.Jail(work_mb=limits.disk_mb, tmp_mb=limits.disk_mb)
    boxes: list[os_sandbox.Sandboxed] = []
    try:
        try:
            for _ in range(2):
                boxes.append(os_sandbox.start([sys.executable, "-I", "-S", "-c", HARNESS], sandbox, jail, SANDBOX_ENV))
        except OSError as exc:
            raise CodeExecutionError(f"the code sandbox could not start ({exc})", field="evaluator") from None
        relay = _Relay(job, *boxes)
        relay.send(relay.p_in, {"mode": "serve", "program": job.program, "entry": job.entry, "steps": [],
                                "limits": lim, "plain": True})
        relay.send(relay.t_in, {"mode": "judge", "program": job.prelude, "test": job.test, "check": job.check,
                                "steps": [], "limits": lim, "plain": True})
        return _pump(relay, time.monotonic() + limits.timeout_s)
    finally:
        for box in boxes:
            box.kill()


def _pump(relay: _Relay, deadline: float) -> str:
    with selectors.DefaultSelector() as sel:
        reading = {relay.p_out, relay.t_out}
        for fd in reading:
            sel.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            writing = relay.flush()
            for fd in (relay.p_in, relay.t_in):
                if fd in writing and fd not in sel.get_map():
                    sel.register(fd, selectors.EVENT_WRITE)
                elif fd not in writing and fd in sel.get_map():
                    sel.unregister(fd)
            for key, _ in sel.select(left):
                if key.fd not in reading:
                    continue
                verdict = relay.step(key.fd)
                if verdict is not None:
                    return verdict
                if relay.lines[key.fd].eof:
                    sel.unregister(key.fd)
                    reading.discard(key.fd)


__all__ = ["RelayJob", "run_relay"]
