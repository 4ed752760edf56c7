"""Running model-written code for code benchmarks (HumanEval, MBPP): only in a limited subprocess, only on request.

Each program runs in a fresh ``python -I`` (isolated: no site dir, no env vars, no cwd on ``sys.path``) in an empty
temporary directory, in its own session, with ``setrlimit`` caps on address space, CPU time, file size, open files
and processes, and a wall-clock timeout that kills its whole process group. Before the program runs, process
spawning, ``os.system`` and file removal are disabled inside it (a program that tries them fails; the limits above
are what actually contain it). Nothing runs unless the user passed ``--allow-code-exec``.
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

from promptweave.errors import CodeExecutionError
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import check_lengths

FLAG = "--allow-code-exec"

# The runner: reads {"program", "test", "limits", "token"} as JSON on stdin, applies the limits, disarms process,
# file and exit APIs, runs the program then the test in one namespace, and reports "<token>:<code>" on a private
# copy of stdout (0 pass, 3 wrong answer, 4 failed); a program that ends the process itself never reports a pass.
# process spawning, killing and file removal disarmed in both the one-shot runner and the session script
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
    try:  # RLIMIT_NPROC is ignored for root; the spawning APIs are disarmed below as well
        resource.setrlimit(getattr(resource, _res), (_v, _v))
    except (ValueError, OSError):
        pass
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


def _rlimits(lim: Limits) -> dict[str, int]:
    """Set by the runner itself before the program runs (no ``preexec_fn``: it is unsafe with threads)."""
    return {"RLIMIT_AS": lim.memory_mb * 1024 * 1024, "RLIMIT_CPU": lim.cpu_s,
            "RLIMIT_FSIZE": lim.file_mb * 1024 * 1024, "RLIMIT_CORE": 0, "RLIMIT_NOFILE": 64, "RLIMIT_NPROC": 0}


def run_program(program: str, test: str = "", limits: Limits = Limits()) -> str:
    """``pass``, ``wrong_answer`` (an assertion failed), ``failed`` (any other error or a limit hit) or ``timeout``."""
    with tempfile.TemporaryDirectory(prefix="pw-sandbox-") as cwd:
        try:
            proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _RUNNER], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd,
                                    env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, start_new_session=True,
                                    close_fds=True)
        except OSError as exc:
            raise CodeExecutionError(f"the code sandbox could not start ({exc})", field="evaluator") from None
        token = secrets.token_hex(16)
        job = {"program": program, "test": test, "limits": _rlimits(limits), "token": token}
        out = b""
        try:
            out, _ = proc.communicate(json.dumps(job).encode("utf-8", "surrogatepass"), timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc)
            return "timeout"
        except BrokenPipeError:
            proc.wait()
        finally:
            _kill(proc)
    if proc.returncode == -signal.SIGXCPU:
        return "timeout"
    code = None
    for line in out.decode("utf-8", "replace").splitlines()[::-1]:
        if line.startswith(token + ":"):
            code = line[len(token) + 1:]
            break
    return {"0": "pass", "3": "wrong_answer"}.get(code or "", "failed")


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None and not pipe.closed:
            try:
                pipe.close()
            except OSError:
                pass


def run_many(jobs: Sequence[tuple[str, str]], limits: Limits = Limits(), workers: int = 4) -> list[str]:
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs) or 1))) as pool:
        return list(pool.map(lambda j: run_program(j[0], j[1], limits), jobs))


def require_flag(ctx: Any, who: str, where: str = "eval_cfg.evaluator.type") -> None:
    if ctx is None or not getattr(ctx, "allow_code_exec", False):
        raise CodeExecutionError(f"{who} runs the model's code; it only runs with {FLAG}", field=where, value=who,
                                 expected=f"promptweave run {FLAG} ... (code runs in a limited subprocess)")


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
        results = run_many(jobs, Limits(timeout_s=3.0 + 2.0, cpu_s=5))
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
        results = run_many(jobs, Limits(timeout_s=10.0, cpu_s=9))
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
        results = run_many(jobs, Limits(timeout_s=10.0, cpu_s=9))
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
        results = run_many(jobs, self.limits)
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
        results = run_many(jobs, self.limits)
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
# One process per conversation, kept alive between cells so a variable defined in one step is there in the next, as
# in the Jupyter kernel the reference drives. The same limits as above (address space, CPU for the whole session,
# file size, open files; process, file-removal and exit APIs disarmed), plus a wall-clock limit per cell that ends
# the session (the next cell starts a fresh one, and says so). site-packages stay importable: the model's code
# is meant to use the environment's libraries (pandas, matplotlib, ...), as in the reference.
_SESSION = r'''
import ast, io, json, os, sys, traceback, resource, posix
_token = sys.argv[1]
_images = sys.argv[2]
_report = os.fdopen(os.dup(1), "w")
_exit = os._exit
_limits = json.loads(sys.argv[3])
for _res, _v in _limits.items():
    try:
        resource.setrlimit(getattr(resource, _res), (_v, _v))
    except (ValueError, OSError):
        pass
''' + _DISARM + r'''def _no_input(*a, **k):
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
_n_img = [0]
def _figures(chunks, images):
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    for num in list(plt.get_fignums()):
        _n_img[0] += 1
        path = os.path.join(_images, "fig-%04d.png" % _n_img[0])
        try:
            plt.figure(num).savefig(path, format="png")
            images.append(path)
        except Exception:
            pass
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
'''


@dataclass(frozen=True)
class SessionLimits:
    """Limits of an agent's Python session: wall clock per cell; memory, CPU and file size for the whole session."""

    cell_timeout_s: float = 60.0
    memory_mb: int = 4096
    cpu_s: int = 600
    file_mb: int = 64


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
    """A persistent Python process for one conversation (see ``_SESSION``); ``run(code)`` executes one cell.

    ``data_dir``: a folder made visible in the session's working directory under its own name (CIBench's
    ``datasources``), read where the model's code expects it; ``image_dir``: where figures are saved (kept after
    the session ends, for scoring). Use as a context manager, or call ``close()``.
    """

    def __init__(self, limits: SessionLimits = SessionLimits(), *, data_dir: str | os.PathLike | None = None,
                 image_dir: str | os.PathLike | None = None) -> None:
        self.limits = limits
        self.data_dir = None if data_dir is None else os.path.abspath(data_dir)
        self._own_images = image_dir is None
        self.image_dir = tempfile.mkdtemp(prefix="pw-images-") if image_dir is None else str(image_dir)
        os.makedirs(self.image_dir, exist_ok=True)
        self._proc: subprocess.Popen | None = None
        self._cwd: tempfile.TemporaryDirectory | None = None
        self._buf = b""
        self.cells = 0
        self.started = 0

    def _start(self) -> None:
        self._cwd = tempfile.TemporaryDirectory(prefix="pw-session-")
        if self.data_dir and os.path.isdir(self.data_dir):
            os.symlink(self.data_dir, os.path.join(self._cwd.name, os.path.basename(self.data_dir)))
        self._token = secrets.token_hex(16)
        lim = {"RLIMIT_AS": self.limits.memory_mb * 1024 * 1024, "RLIMIT_CPU": self.limits.cpu_s,
               "RLIMIT_FSIZE": self.limits.file_mb * 1024 * 1024, "RLIMIT_CORE": 0, "RLIMIT_NOFILE": 256}
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
               "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HOME": self._cwd.name}
        try:
            self._proc = subprocess.Popen([sys.executable, "-I", "-c", _SESSION, self._token, self.image_dir,
                                           json.dumps(lim)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, cwd=self._cwd.name, env=env,
                                          start_new_session=True, close_fds=True)
        except OSError as exc:
            raise CodeExecutionError(f"the code interpreter could not start ({exc})",
                                     field="infer_cfg.inferencer") from None
        self._buf = b""
        self.started += 1

    def run(self, code: str) -> CellResult:
        restarted = self._proc is None and self.started > 0
        if self._proc is None or self._proc.poll() is not None:
            restarted = restarted or self._proc is not None
            self._stop()
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        self.cells += 1
        try:
            self._proc.stdin.write((json.dumps({"code": code}) + "\n").encode("utf-8", "surrogatepass"))
            self._proc.stdin.flush()
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
                          tuple(str(p) for p in got.get("images", [])), restarted=restarted)

    def _read_report(self, timeout: float) -> dict | None:
        import selectors
        import time

        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        tag = self._token.encode()
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
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return None
                self._buf += chunk

    def _stop(self) -> None:
        if self._proc is not None:
            _kill(self._proc)
            self._proc = None
        if self._cwd is not None:
            self._cwd.cleanup()
            self._cwd = None

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
            expected=f"promptweave run {FLAG} ... (the code runs in a limited subprocess per conversation)")
