"""How often the 95% intervals hold the truth: simulated runs with known effects.

Usage: python benchmarks/ci_coverage.py [--trials N]

- Wilson: n rows, each right with probability p; the interval should hold p about 95% of the time.
- Newcombe (paired): two runs on the same n rows with a known difference of accuracy and correlated verdicts.
- Bootstrap (percentile): the mean of per-row scores drawn from a skewed distribution with a known mean.
- Cluster bootstrap: conversations of 3 turns whose verdicts share a conversation effect.
Prints one line per setting with the coverage measured (and the share of simulated p < 0.05 under no effect
for the exact McNemar test: its size).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from promptweave.evaluate.intervals import bootstrap_mean, mcnemar_exact, newcombe_paired, wilson  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=2000)
    trials = ap.parse_args().trials
    rng = np.random.default_rng(7)
    for n, p in ((30, 0.5), (100, 0.8), (500, 0.95), (60, 0.1)):
        hit = 0
        for _ in range(trials):
            lo, hi = wilson(int(rng.binomial(n, p)), n)
            hit += lo <= p <= hi
        print(f"wilson          n={n:4d} p={p:.2f}: coverage {hit / trials:.3f}")
    for n, pa, pb, rho in ((60, 0.6, 0.7, 0.5), (200, 0.5, 0.5, 0.3), (400, 0.8, 0.85, 0.6)):
        hit = size = 0
        for _ in range(trials):
            z = rng.random(n) < rho  # shared rows: both runs decided by one draw
            u, v, w = rng.random(n), rng.random(n), rng.random(n)
            a = np.where(z, u < pa, v < pa)
            b = np.where(z, u < pb, w < pb)
            cnt = (int(np.sum(a & b)), int(np.sum(a & ~b)), int(np.sum(~a & b)), int(np.sum(~a & ~b)))
            lo, hi = newcombe_paired(*cnt)
            hit += lo <= pb - pa <= hi
            size += pa == pb and mcnemar_exact(cnt[1], cnt[2]) < 0.05
        line = f"newcombe-paired n={n:4d} {pa:.2f}->{pb:.2f} rho={rho}: coverage {hit / trials:.3f}"
        print(line + (f"; McNemar size at 0.05: {size / trials:.3f}" if pa == pb else ""))
    for n in (50, 200):
        hit = 0
        for _ in range(max(200, trials // 5)):
            x = rng.exponential(10.0, size=n)
            lo, hi = bootstrap_mean(x, resamples=1000, seed=int(rng.integers(1 << 30)))
            hit += lo <= 10.0 <= hi
        print(f"bootstrap       n={n:4d} exponential mean 10: coverage {hit / max(200, trials // 5):.3f}")
    hit = 0
    runs = max(200, trials // 5)
    for _ in range(runs):
        conv = rng.normal(0, 1.0, size=40)
        p = 1 / (1 + np.exp(-(0.4 + conv)))
        verdicts = (rng.random((40, 3)) < p[:, None]).astype(float).ravel()
        groups = np.repeat(np.arange(40), 3)
        lo, hi = bootstrap_mean(verdicts, groups, resamples=1000, seed=int(rng.integers(1 << 30)))
        truth = float(np.mean(1 / (1 + np.exp(-(0.4 + rng.normal(0, 1.0, size=200000))))))
        hit += lo <= truth <= hi
    print(f"cluster-bootstrap 40 conversations x 3 turns: coverage {hit / runs:.3f}")


if __name__ == "__main__":
    main()
