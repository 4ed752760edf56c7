"""Figures of a spread: how much of a score is the prompt's format.

* min, max, spread (max − min), mean and standard deviation of the variants' scores (FormatSpread, Sclar et
  al. 2023, reports the spread; Mizrahi et al. 2024 argue for the mean and spread over many prompts);
* a bootstrap 95% interval of the mean over variants (percentile bootstrap, variants resampled);
* PSS, ProSA's PromptSensiScore (Zhuo et al. 2024): for each instance, the mean absolute difference of its
  result over all pairs of variants; then the mean over instances;
* each variant's ranking of the models, and how often the top model differs from variant 0's;
* whether a ranking survives the format (:func:`robustness`): a leaderboard by mean score across variants with
  intervals, and each pair's paired difference per variant (wins, mean and worst-case gap).
"""
from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

BOOTSTRAP_SAMPLES = 2000


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def std(xs: Sequence[float]) -> float:
    """Sample standard deviation (n − 1); 0 for a single value."""
    if len(xs) < 2:
        return 0.0
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def bootstrap_ci(xs: Sequence[float], *, seed: int = 0, samples: int = BOOTSTRAP_SAMPLES,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``xs`` (resampled with replacement, seeded)."""
    if not xs:
        return (math.nan, math.nan)
    if len(xs) == 1:
        return (xs[0], xs[0])
    rng = random.Random(f"promptweave-spread-bootstrap:{seed}")
    n = len(xs)
    means = sorted(sum(xs[rng.randrange(n)] for _ in range(n)) / n for _ in range(samples))
    lo = means[int(math.floor((1 - level) / 2 * (samples - 1)))]
    hi = means[int(math.ceil((1 + level) / 2 * (samples - 1)))]
    return (lo, hi)


def pair_mean_abs_diff(values: Sequence[float]) -> float | None:
    """Mean of |a − b| over all unordered pairs of ``values``; None for fewer than two."""
    m = len(values)
    if m < 2:
        return None
    xs = sorted(values)
    total = sum(x * (2 * j - m + 1) for j, x in enumerate(xs))  # sum over j of x_j·(#smaller − #larger)
    return total / (m * (m - 1) / 2)


def pss(results: Sequence[Sequence[float | None]]) -> float | None:
    """ProSA's PromptSensiScore of a variants × instances table of per-instance results (None: no result).

    Instances with fewer than two results are left out; None when none is left.
    """
    if not results:
        return None
    n = max(len(r) for r in results)
    per_instance = []
    for i in range(n):
        vals = [float(v) for r in results if i < len(r) and (v := r[i]) is not None]
        d = pair_mean_abs_diff(vals)
        if d is not None:
            per_instance.append(d)
    return _mean(per_instance) if per_instance else None


def summarize(scores: Sequence[float | None], results: Sequence[Sequence[float | None]] | None = None, *,
              seed: int = 0) -> dict[str, Any]:
    """The figures of one dataset × model over its variants (``scores[k]``: variant k's score, None if failed).

    ``best`` / ``worst``: the variant whose score is strictly above / below every other scored variant's; None
    when the top (bottom) score is tied or only one variant scored (a tie is neither best nor worst)."""
    got = [(k, s) for k, s in enumerate(scores) if s is not None]
    xs = [s for _, s in got]
    out: dict[str, Any] = {"variants": len(scores), "scored": len(xs)}
    if not xs:
        out.update(min=None, max=None, spread=None, mean=None, std=None, ci95=None, best=None, worst=None,
                   pss=None)
        return out
    best, worst = _unique_at(got, max(xs)), _unique_at(got, min(xs))
    lo, hi = bootstrap_ci(xs, seed=seed)
    out.update(min=min(xs), max=max(xs), spread=max(xs) - min(xs), mean=_mean(xs), std=std(xs), ci95=[lo, hi],
               best=best, worst=worst, pss=None if results is None else pss(results))
    return out


def _unique_at(got: Sequence[tuple[int, float]], score: float) -> int | None:
    """The one variant with ``score``, when exactly one of two or more scored variants has it."""
    at = [k for k, s in got if s == score]
    return at[0] if len(at) == 1 and len(got) > 1 else None


def rankings(scores: Mapping[str, Sequence[float | None]]) -> dict[str, Any]:
    """Per variant, the models best first (by score; failed ones last); and how often the top model changes.

    ``top_changes`` counts the variants whose top model differs from variant 0's.
    """
    models = list(scores)
    n = max((len(v) for v in scores.values()), default=0)
    per_variant = []
    for k in range(n):
        have = [(m, v) for m in models if k < len(scores[m]) and (v := scores[m][k]) is not None]
        ranked = sorted(have, key=lambda ms: -ms[1])  # stable: ties keep the config's model order
        order = [m for m, _ in ranked]
        top = ranked[0][0] if ranked and (len(ranked) == 1 or ranked[1][1] < ranked[0][1]) else None  # tie: none
        per_variant.append({"variant": k, "ranking": order, "top": top})
    tops = [p["top"] for p in per_variant]
    changes = sum(1 for t in tops[1:] if t != tops[0]) if tops else 0
    return {"per_variant": per_variant, "top_changes": changes,
            "top_models": sorted({t for t in tops if t is not None})}


def robustness(scores: Mapping[str, Sequence[float | None]], *, seed: int = 0) -> dict[str, Any]:
    """Whether a ranking of models survives the format: a leaderboard by mean score across the variants all models
    scored, and for each pair of models their paired difference per variant.

    ``leaderboard``: models best first by mean over the shared variants, each with the bootstrap 95% interval of
    that mean; ``format_dependent`` marks a model whose place some variant changes. ``pairs``: for each pair
    (leader first), the variants where each wins or they tie, the mean and worst-case gap (leader − other; a
    negative worst case is a variant where the other model wins), and ``holds`` (the leader wins every variant).
    ``ranking_holds``: one order under every variant.
    """
    models = list(scores)
    n = max((len(v) for v in scores.values()), default=0)
    shared = [k for k in range(n) if all(k < len(scores[m]) and scores[m][k] is not None for m in models)]
    if len(models) < 2 or not shared:
        return {"shared_variants": len(shared), "leaderboard": [], "pairs": [], "ranking_holds": None}
    vals = {m: [float(scores[m][k]) for k in shared] for m in models}  # type: ignore[arg-type]
    board = sorted(models, key=lambda m: -_mean(vals[m]))  # stable: ties keep the config's order
    def order_at(k: int) -> tuple[str, ...]:
        return tuple(sorted(models, key=lambda m: -vals[m][k]))

    orders = [order_at(i) for i in range(len(shared))]
    place = {m: i for i, m in enumerate(board)}
    moved = {m for order in orders for i, m in enumerate(order) if place[m] != i}
    leaderboard = []
    for m in board:
        lo, hi = bootstrap_ci(vals[m], seed=seed)
        leaderboard.append({"model": m, "mean": _mean(vals[m]), "ci95": [lo, hi], "min": min(vals[m]),
                            "max": max(vals[m]), "format_dependent": m in moved})
    pairs = []
    for i, a in enumerate(board):
        for b in board[i + 1:]:
            gaps = [x - y for x, y in zip(vals[a], vals[b], strict=True)]
            pairs.append({"leader": a, "other": b, "variants": len(gaps),
                          "leader_wins": sum(1 for g in gaps if g > 0), "other_wins": sum(1 for g in gaps if g < 0),
                          "ties": sum(1 for g in gaps if g == 0), "mean_gap": _mean(gaps), "worst_gap": min(gaps),
                          "holds": all(g > 0 for g in gaps)})
    return {"shared_variants": len(shared), "leaderboard": leaderboard, "pairs": pairs,
            "ranking_holds": len(set(orders)) == 1 and all(p["holds"] for p in pairs)}


__all__ = ["bootstrap_ci", "pair_mean_abs_diff", "pss", "rankings", "robustness", "std", "summarize"]
