"""LCBench (LeetCode problems, OpenCompass's ``LCEvaluator`` / ``LCPassKEvaluator``): each code block of the reply
run with the row's assertions, which call ``Solution().f`` when the program defines ``class Solution``.

The assertions compare type-aware, as MBPP's do (:mod:`promptweave.suites.code.mbpp`).
"""
from __future__ import annotations

import ast
from typing import Any

from promptweave.evaluate.code_exec import Job, Limits, require_flag, run_many, sandbox_of
from promptweave.evaluate.code_plan import module_steps
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import check_lengths
from promptweave.suites.code.passk import CodeEvaluator, pass_at_k


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
    return test_case


def lc_job(code: str, tests: str) -> Job:
    return Job(code, tuple(module_steps(lc_tests(tests, code), typed=True)))


class LCEvaluator(CodeEvaluator):
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
                jobs.append(lc_job(code, tests))
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
                    jobs.append(lc_job(code, tests))
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
                metrics[f"pass@{k}"] = 100.0 * sum(pass_at_k(total[t], passed[t], k) for t in total) / len(total)
        return Scores(metrics, [row_ok.get(i, False) for i in range(len(predictions))])


# the suite's entries in the compat registries (compat/suites.py)
EVALUATORS: dict[str, type] = {"LCEvaluator": LCEvaluator, "LCPassKEvaluator": LCPassKEvaluator}
