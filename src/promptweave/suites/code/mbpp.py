"""MBPP: the code of the answer's ``[BEGIN] ... [DONE]`` (or fenced) block run with the row's assertions.

The assertions compare type-aware (``1 != 1.0``, a forged ``__eq__`` never equals): each ``assert f(x) == <literal>``
is a probe judged outside the sandbox; other top-level ``assert a == b`` are compared by the sandbox harness's own
equality, bound where the program cannot rebind it (:mod:`promptweave.evaluate.code_plan`).
"""
from __future__ import annotations

from typing import Any

from promptweave.errors import CodeExecutionError
from promptweave.evaluate.code_exec import Job, Limits, require_flag, run_many, sandbox_of
from promptweave.evaluate.code_plan import module_steps
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import check_lengths
from promptweave.suites.code.passk import CodeEvaluator, pass_at_k

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


class MBPPEvaluator(CodeEvaluator):
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
        jobs, tests_of = [], []
        for pred, ref in zip(predictions, references):
            tests = "\n".join(ref) if isinstance(ref, (list, tuple)) else str(ref)
            tests_of.append(tests)
            jobs.append(Job(mbpp_answer(str(pred)), tuple(module_steps(tests, typed=True))))
        results = run_many(jobs, Limits(timeout_s=10.0, cpu_s=9), sandbox=sandbox_of(ctx))
        counts = {"pass": 0, "timeout": 0, "failed": 0, "wrong_answer": 0}
        details = []
        for job, test, res, pred in zip(jobs, tests_of, results, predictions):
            counts[res] += 1
            details.append({"origin": pred, "programs": [job.program, test], "result": res,
                            "is_correct": res == "pass"})
        metrics = {k: float(v) for k, v in counts.items()}
        metrics["score"] = 100.0 * counts["pass"] / len(predictions) if predictions else 0.0
        return Scores(metrics, [r == "pass" for r in results], details)


class MBPPPassKEvaluator(CodeEvaluator):
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
                jobs.append(Job(mbpp_answer(str(pred)), tuple(module_steps(str(ref["test_list_2"]), typed=True))))
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
                metrics[f"pass@{k}"] = 100.0 * sum(pass_at_k(total[t], passed[t], k) for t in total) / len(total)
        per_row, j = [], 0
        for preds in predictions:
            m = len(preds) if isinstance(preds, list) else 1
            per_row.append(all(r == "pass" for r in results[j:j + m]))
            j += m
        return Scores(metrics, per_row)


# the suite's entries in the compat registries (compat/suites.py); MBPPEvaluator is promptweave.suites.mbpp_plus's
EVALUATORS: dict[str, type] = {"MBPPPassKEvaluator": MBPPPassKEvaluator}
