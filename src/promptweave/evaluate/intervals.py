"""How sure a score is, and whether a difference between two runs is real: intervals and paired tests.

Pure functions over per-row outcomes (numpy only; nothing here calls a model or reads a file):

- :func:`wilson` — the Wilson score interval for a proportion (a score that is the share of rows correct);
- :func:`bootstrap_mean` — a percentile bootstrap interval for the mean of per-row values, resampling whole
  groups when rows share one (the turns of one conversation), with a fixed seed so a rerun gives the same file;
- :func:`mcnemar_exact` — the exact two-sided McNemar test on the discordant pairs of two runs' verdicts;
- :func:`newcombe_paired` — Newcombe's interval (his method 10) for the difference of two paired proportions;
- :func:`paired_permutation` — the paired (sign-flip) permutation test for per-row numeric scores, exact up to
  :data:`EXACT_UP_TO` pairs, Monte Carlo with a fixed seed above;
- :func:`holm` — Holm's step-down adjustment when several datasets are compared at once.

Z95 is the two-sided 95% normal quantile.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np

Z95 = 1.959963984540054
SEED = 20240611
RESAMPLES = 2000
EXACT_UP_TO = 16


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for ``k`` successes in ``n`` trials, as proportions in [0, 1]."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean(values: Sequence[float], groups: Sequence[Hashable] | None = None, *,
                   resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    """A 95% percentile bootstrap interval for the mean of ``values`` (clustered by ``groups`` when given)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    if groups is None:
        idx = rng.integers(0, x.size, size=(resamples, x.size))
        means = x[idx].mean(axis=1)
    else:
        keys = list(dict.fromkeys(groups))
        pos = {k: i for i, k in enumerate(keys)}
        g = np.array([pos[k] for k in groups])
        sums = np.bincount(g, weights=x, minlength=len(keys))
        counts = np.bincount(g, minlength=len(keys)).astype(float)
        pick = rng.integers(0, len(keys), size=(resamples, len(keys)))
        means = sums[pick].sum(axis=1) / counts[pick].sum(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi))


def _binom_cdf_half(k: int, n: int) -> float:
    """P(Bin(n, 1/2) <= k), exactly (log-space sums: no overflow for large n)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2) for i in range(k + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(v - top) for v in logs))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p: ``min(1, 2 · P(Bin(b + c, 1/2) <= min(b, c)))``; 1 when there is no discordant
    pair."""
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2 * _binom_cdf_half(min(b, c), n))


def newcombe_paired(a: int, b: int, c: int, d: int, z: float = Z95) -> tuple[float, float]:
    """95% interval for ``p_B − p_A`` from a paired 2×2 table (Newcombe 1998, method 10), as proportions.

    ``a``: both right, ``b``: only A right, ``c``: only B right, ``d``: both wrong.
    """
    n = a + b + c + d
    if n == 0:
        return (-1.0, 1.0)
    p1, p2 = (a + b) / n, (a + c) / n  # A's and B's share right
    l1, u1 = wilson(a + b, n, z)
    l2, u2 = wilson(a + c, n, z)
    prod = (a + b) * (c + d) * (a + c) * (b + d)
    if prod == 0:
        phi = 0.0
    else:
        num = a * d - b * c
        num = max(num - n / 2, 0.0) if num > 0 else num
        phi = num / math.sqrt(prod)
    theta = p1 - p2
    lower = theta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    upper = theta + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return (max(-1.0, -upper), min(1.0, -lower))  # for p2 − p1


def paired_permutation(x: Sequence[float], y: Sequence[float], *, resamples: int = 10000,
                       seed: int = SEED) -> float:
    """Two-sided p of the paired sign-flip permutation test of mean(y − x) = 0."""
    diff = np.asarray(y, dtype=float) - np.asarray(x, dtype=float)
    diff = diff[diff != 0]
    if diff.size == 0:
        return 1.0
    observed = abs(diff.sum())
    tol = 1e-12 * max(1.0, observed)
    if diff.size <= EXACT_UP_TO:
        signs = np.array(list(product((1.0, -1.0), repeat=diff.size)))
        stats = np.abs(signs @ diff)
        return float(np.mean(stats >= observed - tol))
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(resamples, diff.size))
    stats = np.abs(signs @ diff)
    return float((1 + np.sum(stats >= observed - tol)) / (resamples + 1))


def paired_bootstrap(x: Sequence[float], y: Sequence[float], *, resamples: int = RESAMPLES,
                     seed: int = SEED) -> tuple[float, float]:
    """95% percentile bootstrap interval for mean(y − x) over paired rows."""
    return bootstrap_mean(np.asarray(y, dtype=float) - np.asarray(x, dtype=float), resamples=resamples, seed=seed)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None)."""
    known = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(known)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


# -- a results file's intervals ---------------------------------------------------------------------------------------
@dataclass
class ScoreIntervals:
    """What a results file gets: rows scored, each metric's 95% interval (metric units) and how it was found."""

    n: int
    ci95: dict[str, list[float]]
    method: dict[str, str]

    def fields(self) -> dict[str, Any]:
        return {"n": self.n, "metrics_ci95": self.ci95, "ci_method": self.method}


def _scale(value: float, share: float) -> float | None:
    """The factor that turns the share of rows right into ``value`` (100 for a percentage, 1 for a fraction)."""
    for factor in (100.0, 1.0):
        if abs(value - factor * share) <= 1e-6 * max(1.0, factor):
            return factor
    return None


def score_intervals(metrics: dict[str, Any], rows: Sequence[dict[str, Any]]) -> ScoreIntervals:
    """Intervals for the metrics that are the share of ``rows`` judged correct (their ``correct`` field).

    Rows of one conversation (multi-turn rows: same ``index``, a ``turn_id``) are one cluster: the interval is then a
    cluster bootstrap, since a conversation's turns are not independent. A metric that is not such a share (a
    corpus BLEU, a judge's mean grade) gets no interval, and ``ci_method`` says so.
    """
    scored = [r for r in rows if isinstance(r.get("correct"), bool)]
    n = len(scored)
    k = sum(1 for r in scored if r["correct"])
    clustered = any("turn_id" in r or "turn" in r for r in scored)
    ci: dict[str, list[float]] = {}
    method: dict[str, str] = {}
    for name, value in metrics.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            continue
        factor = _scale(float(value), k / n) if n else None
        if factor is None:
            method[name] = "none (not the share of rows correct)"
            continue
        if clustered:
            lo, hi = bootstrap_mean([1.0 if r["correct"] else 0.0 for r in scored],
                                    [r.get("index") for r in scored])
            method[name] = "cluster-bootstrap(conversation)"
        else:
            lo, hi = wilson(k, n)
            method[name] = "wilson"
        ci[name] = [round(lo * factor, 6), round(hi * factor, 6)]
    return ScoreIntervals(n, ci, method)
