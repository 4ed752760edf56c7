"""Intervals and paired tests against independent computations (scipy) on fixed data."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.evaluate.intervals import (
    bootstrap_mean,
    holm,
    mcnemar_exact,
    newcombe_paired,
    paired_permutation,
    score_intervals,
    wilson,
)

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy (in the test extra) is the independent check")


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (57, 60), (412, 1000), (1, 1)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    ref = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(ref.low, abs=1e-9) and hi == pytest.approx(ref.high, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_is_the_exact_binomial_test_on_the_discordant_pairs(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else scipy_stats.binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert mcnemar_exact(b, c) == mcnemar_exact(c, b)


def test_mcnemar_large_counts_do_not_overflow() -> None:
    assert mcnemar_exact(3000, 3300) == pytest.approx(scipy_stats.binomtest(3000, 6300, 0.5).pvalue, rel=1e-6)


@pytest.mark.parametrize("a,b,c,d", [(12, 9, 2, 21), (30, 0, 12, 30), (5, 5, 5, 5), (0, 3, 0, 0), (40, 1, 9, 2)])
def test_newcombe_paired_matches_an_independent_computation(a: int, b: int, c: int, d: int) -> None:
    """Method 10 written out from the paper's formulas over scipy's Wilson limits."""
    n = a + b + c + d
    w1 = scipy_stats.binomtest(a + b, n).proportion_ci(method="wilson")
    w2 = scipy_stats.binomtest(a + c, n).proportion_ci(method="wilson")
    p1, p2 = (a + b) / n, (a + c) / n
    marg = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0 if marg == 0 else ((max(a * d - b * c - n / 2, 0) if a * d > b * c else a * d - b * c) / math.sqrt(marg))
    lower = (p1 - p2) - math.sqrt((p1 - w1.low) ** 2 - 2 * phi * (p1 - w1.low) * (w2.high - p2) + (w2.high - p2) ** 2)
    upper = (p1 - p2) + math.sqrt((w1.high - p1) ** 2 - 2 * phi * (w1.high - p1) * (p2 - w2.low) + (p2 - w2.low) ** 2)
    assert newcombe_paired(a, b, c, d) == pytest.approx((-upper, -lower), abs=1e-9)
    lo, hi = newcombe_paired(a, b, b, d)
    assert lo == pytest.approx(-hi)  # no difference: an interval symmetric around 0


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_newcombe_interval_holds_the_estimate_and_stays_in_range(a: int, b: int, c: int, d: int) -> None:
    n = a + b + c + d
    lo, hi = newcombe_paired(a, b, c, d)
    assert -1.0 <= lo <= hi <= 1.0
    if n:
        assert lo - 1e-9 <= (c - b) / n <= hi + 1e-9


def test_a_clear_difference_excludes_zero_exactly_when_mcnemar_rejects() -> None:
    for b, c in [(0, 12), (2, 14), (5, 20), (10, 10), (3, 6), (12, 2), (7, 9)]:  # clear differences, and none
        a, d = 30, 30
        lo, hi = newcombe_paired(a, b, c, d)
        assert (lo > 0 or hi < 0) == (mcnemar_exact(b, c) < 0.05), (b, c)


def test_paired_permutation_matches_scipy() -> None:
    x = np.array([0.2, 0.5, 0.1, 0.9, 0.4, 0.3, 0.8, 0.6, 0.7, 0.1])
    y = x + np.array([0.1, 0.05, 0.2, -0.02, 0.15, 0.1, 0.0, 0.12, 0.08, 0.03])
    ref = scipy_stats.permutation_test((x, y), lambda u, v: np.mean(v - u), permutation_type="samples",
                                       n_resamples=np.inf, alternative="two-sided").pvalue
    assert paired_permutation(x, y) == pytest.approx(ref, abs=1e-12)
    assert paired_permutation(x, x) == 1.0


def test_bootstrap_interval_is_near_scipys_percentile_bootstrap() -> None:
    rng = np.random.default_rng(1)
    v = rng.normal(50, 10, size=200)
    ref = scipy_stats.bootstrap((v,), np.mean, confidence_level=0.95, method="percentile", n_resamples=4000,
                                random_state=2).confidence_interval
    lo, hi = bootstrap_mean(v, resamples=4000)
    assert lo == pytest.approx(ref.low, abs=0.4) and hi == pytest.approx(ref.high, abs=0.4)
    assert bootstrap_mean(v) == bootstrap_mean(v)  # a fixed seed: the same file on a rerun


def test_cluster_bootstrap_is_wider_when_rows_of_a_group_agree() -> None:
    values = [1.0] * 5 + [0.0] * 5 + [1.0] * 5 + [0.0] * 5
    groups = [0] * 5 + [1] * 5 + [2] * 5 + [3] * 5
    lo_c, hi_c = bootstrap_mean(values, groups)
    lo, hi = bootstrap_mean(values)
    assert hi_c - lo_c > hi - lo


def test_holm_matches_the_textbook() -> None:
    assert holm([0.01, 0.04, 0.03, None, 0.005]) == pytest.approx([0.03, 0.06, 0.06, None, 0.02])


def test_a_results_file_gets_n_and_a_wilson_interval_in_its_own_units() -> None:
    rows = [{"correct": True}] * 7 + [{"correct": False}] * 3 + [{"correct": None}]
    got = score_intervals({"accuracy": 70.0, "bleu": 12.3}, rows)
    lo, hi = wilson(7, 10)
    assert got.n == 10
    assert got.ci95["accuracy"] == pytest.approx([100 * lo, 100 * hi])
    assert got.method == {"accuracy": "wilson", "bleu": "none (not the share of rows correct)"}
    assert "bleu" not in got.ci95
    frac = score_intervals({"acc": 0.7}, rows)
    assert frac.ci95["acc"] == pytest.approx([lo, hi])


def test_multi_turn_rows_are_clustered_by_conversation() -> None:
    rows = [{"index": i // 3, "turn_id": i % 3, "correct": (i // 3) % 2 == 0} for i in range(12)]
    got = score_intervals({"accuracy": 50.0}, rows)
    assert got.method["accuracy"] == "cluster-bootstrap(conversation)"
    assert math.isfinite(got.ci95["accuracy"][0])
