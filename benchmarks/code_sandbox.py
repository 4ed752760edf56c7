"""The cost of the OS sandbox per code row: MBPP-shaped rows (a short function and three asserts) scored by
``run_many`` in the bubblewrap sandbox and, as the baseline measured in the same run, in the rlimits mode (a bare
``python -I -S`` subprocess). Rounds alternate between the two; the medians and their ratio are printed.

    PYTHONPATH=src python benchmarks/code_sandbox.py [--rows 64] [--rounds 5] [--workers 2]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

from promptweave.evaluate import os_sandbox
from promptweave.evaluate.code_exec import Limits, run_many

PROGRAM = "def add(a, b):\n    return a + b\n"
TESTS = "assert add(1, 2) == 3\nassert add(0, 0) == 0\nassert add(-1, 1) == 0\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    why = os_sandbox.unavailable_reason()
    if why is not None:
        sys.exit(f"bubblewrap is not usable here: {why}")
    jobs = [(PROGRAM, TESTS)] * a.rows
    times: dict[str, list[float]] = {"bwrap": [], "rlimits": []}
    run_many(jobs[:4], Limits(), a.workers, "bwrap")  # warm the page cache for both
    run_many(jobs[:4], Limits(), a.workers, "rlimits")
    for _ in range(a.rounds):
        for mode in ("rlimits", "bwrap"):
            t0 = time.perf_counter()
            res = run_many(jobs, Limits(), a.workers, mode)
            times[mode].append(time.perf_counter() - t0)
            assert res == ["pass"] * a.rows, (mode, res[:3])
    med = {m: statistics.median(v) for m, v in times.items()}
    for m in ("rlimits", "bwrap"):
        print(f"{m:8s} {a.rows} rows, {a.workers} workers: median {med[m]:.2f} s "
              f"({1000 * med[m] / a.rows * a.workers:.1f} ms per row per worker)")
    print(f"bwrap / rlimits: {med['bwrap'] / med['rlimits']:.2f}x")


if __name__ == "__main__":
    main()
