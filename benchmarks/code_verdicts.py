"""The cost of deciding code verdicts outside the sandbox, per row, against running the test as written.

Three ways to score the same HumanEval-shaped row (``add`` and a check of five assertions): the test run as written
inside the program's sandbox (the baseline: the harness's own report decides), the assertions split into probes
whose values the judge compares (one sandbox), and the relay (the check in a sandbox of its own, each call answered
by the program's sandbox: two sandboxes). Rounds alternate; the medians and the ratios to the baseline are printed.

    PYTHONPATH=src python benchmarks/code_verdicts.py [--rows 16] [--rounds 3] [--workers 2] [--sandbox bwrap]
"""
from __future__ import annotations

import argparse
import statistics
import time

from promptweave.evaluate.code_exec import Job, Limits, run_many
from promptweave.evaluate.code_plan import Step, check_function_steps
from promptweave.evaluate.code_relay import RelayJob

PROMPT = 'def add(a, b):\n    """Add."""\n'
PROGRAM = PROMPT + "    return a + b\n"
CHECK = ("def check(candidate):\n" + "".join(f"    assert candidate({i}, {i}) == {2 * i}\n" for i in range(5)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sandbox", default="bwrap")
    a = ap.parse_args()
    steps = check_function_steps(CHECK, "add")
    assert steps is not None
    kinds = {
        "as written": [Job(PROGRAM, (Step("exec", CHECK + "\ncheck(add)\n"),), plain=True)] * a.rows,
        "probes": [Job(PROGRAM, tuple(steps), plain=True)] * a.rows,
        "relay": [RelayJob(PROGRAM, "add", PROMPT, CHECK)] * a.rows,
    }
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for jobs in kinds.values():
        run_many(jobs[:2], Limits(), a.workers, a.sandbox)  # warm the page cache
    for _ in range(a.rounds):
        for kind, jobs in kinds.items():
            t0 = time.perf_counter()
            res = run_many(jobs, Limits(), a.workers, a.sandbox)
            times[kind].append(time.perf_counter() - t0)
            assert res == ["pass"] * a.rows, (kind, res[:3])
    base = statistics.median(times["as written"])
    for kind, v in times.items():
        med = statistics.median(v)
        print(f"{kind:>10}: {1000 * med / a.rows:7.1f} ms/row  ({med / base:.2f}x the test run as written)")


if __name__ == "__main__":
    main()
