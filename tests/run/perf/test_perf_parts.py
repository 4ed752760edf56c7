"""The parts of perf mode that need no server: the steady-state window, arrival schedules, the ITL store and the
statistics' shapes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.errors import PerfConfigError
from promptweave.run.perf.itl_store import ItlStore, LogHistogram
from promptweave.run.perf.measure import RequestResult
from promptweave.run.perf.schedule import send_offsets, traffic_from
from promptweave.run.perf.stable import stable_window
from promptweave.run.perf.stats import ROWS, STATS, stage_figures, summary
from promptweave.run.perf.sweep import parse_levels, parse_synthetic


def closed_loop(n: int, conc: int, length: float = 1.0) -> tuple[list[float], list[float]]:
    """Start and end times of ``n`` requests of equal length from ``conc`` workers that start together."""
    starts, ends = [], []
    free = [0.0] * conc
    for i in range(n):
        w = i % conc
        starts.append(free[w] if i >= conc else 0.001 * w)  # the next request right after the last one
        ends.append(starts[-1] + length)
        free[w] = ends[-1]
    return starts, ends


def test_a_closed_loop_at_its_maximum_is_steady_until_the_last_send():
    starts, ends = closed_loop(40, 4)
    w = stable_window(starts, ends, 4)
    assert w is not None and w.duration > 0
    # the fourth send brings 4 in flight (the first at the maximum, left out); every later send joins
    assert w.members == list(range(4, 40))


def test_no_steady_state_when_the_maximum_is_never_reached():
    starts, ends = closed_loop(10, 2)
    assert stable_window(starts, ends, 8) is None
    assert stable_window([], [], 4) is None


@settings(deadline=None)
@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0.001, 10)), max_size=60), st.integers(1, 8))
def test_the_window_holds_only_requests_that_exist_and_ordered_bounds(reqs, conc):
    starts = [s for s, _ in reqs]
    ends = [s + d for s, d in reqs]
    w = stable_window(starts, ends, conc)
    if w is not None:
        assert w.start < w.end and len(set(w.members)) == len(w.members)
        assert all(0 <= i < len(reqs) for i in w.members)


def test_arrival_schedules_as_aisbench_offers_them():
    assert send_offsets(traffic_from(0, None), 10) is None  # unpaced
    uniform = send_offsets(traffic_from(4, {"burstiness": 0}), 8)
    assert uniform == pytest.approx([0.25 * (i + 2) for i in range(8)])  # the first gap twice, as AISBench waits
    poisson = send_offsets(traffic_from(10, {}, seed=3), 50)
    assert poisson == sorted(poisson) and poisson[-1] == pytest.approx(5.0 + poisson[0] / 2)  # scaled to n / rate
    assert poisson == send_offsets(traffic_from(10, {}, seed=3), 50)  # seeded
    ramp = send_offsets(traffic_from(1, {"ramp_up_strategy": "linear", "ramp_up_start_rps": 1,
                                         "ramp_up_end_rps": 100, "burstiness": 0}), 20)
    gaps = np.diff([0.0, *ramp])
    assert gaps[0] > gaps[-1]


@pytest.mark.parametrize(("rate", "traffic", "field"), [
    (-1, None, "request_rate"), ("fast", None, "request_rate"), (1, [1], "traffic_cfg"),
    (1, {"ramp_up_strategy": "cubic"}, "ramp_up_strategy"), (1, {"burstiness": -2}, "burstiness"),
])
def test_bad_pacing_settings_are_typed_errors(rate, traffic, field):
    with pytest.raises(PerfConfigError) as err:
        traffic_from(rate, traffic)
    assert field in err.value.field


def test_levels_and_synthetic_lengths_parse():
    assert parse_levels("1, 16,256,16") == [1, 16, 256]
    assert parse_synthetic("128,32") == (128, 32)
    for bad in ("", "0", "1,,2", "-1", "2.5", "100001"):
        with pytest.raises(PerfConfigError):
            parse_levels(bad)


def test_the_itl_store_is_exact_below_its_cap_and_bounded_above_it():
    store = ItlStore(cap=100)
    for i in range(5):
        store.add(i, [0.01 * (i + 1)] * 10, at_max=i >= 2)
    assert store.exact and store.sample().size == 50 and store.sample([0, 4]).size == 20
    for i in range(5, 50):
        store.add(i, [0.02] * 10, at_max=True)
    assert not store.exact and len(store.values) == 0
    total = store.sample()
    assert isinstance(total, LogHistogram) and total.n == 500
    assert store.sample([5]).n == 400  # the requests sent at the maximum after the switch (10 to 49)
    exact = summary(np.array([0.01] * 10 + [0.02] * 10 + [0.03] * 10 + [0.04] * 10 + [0.05] * 10 + [0.02] * 450))
    approx = summary(total)
    for k in STATS:
        assert approx[k] == pytest.approx(exact[k], rel=0.002, abs=1e-4)


def test_a_stage_s_rows_and_counts():
    ok = [RequestResult(i, i, i + 1.0, True, ttft=0.1, e2el=1.0, tpot=0.9 / 9, itl_count=9, input_tokens=5,
                        output_tokens=10, decoded=True) for i in range(4)]
    fig = stage_figures("total", ok, 1, 4.0, np.full(36, 0.1), 2)
    assert list(fig.rows) == list(ROWS)
    assert fig.rows["E2EL"]["Median"] == "1000.0 ms" and fig.rows["OutputTokenThroughput"]["Max"] == "10.0 token/s"
    assert fig.common["Total Requests"] == 5 and fig.common["Failed Requests"] == 1
    assert fig.common["Concurrency"] == 1.0 and fig.common["Max Concurrency"] == 2
    assert fig.common["Prefill Token Throughput"] == "50.0 token/s"
    assert fig.common["Benchmark Duration"] == "4000.0 ms"


def test_workers_outcomes_merge_onto_one_timeline():
    from promptweave.run.perf.client import LoadOutcome
    from promptweave.run.perf.ray_load import merge_loads

    def part(offset: float, n: int) -> LoadOutcome:
        store = ItlStore()
        results = []
        for k in range(n):
            results.append(RequestResult(k, 10.0 + k, 11.0 + k, True, ttft=0.1, e2el=1.0, itl_count=2,
                                         output_tokens=3, in_flight=1, row=int(offset) * 10 + k))
            store.add(k, [0.1 * (k + 1), 0.2], at_max=True)
        return LoadOutcome(results, store, 10.0, 11.0 + n)

    # worker A's monotonic clock reads 10 at wall 1000; worker B's reads 10 at wall 1000.5
    merged = merge_loads([(part(0, 3), 20.0, 1010.0), (part(1, 2), 20.0, 1010.5)], concurrency=2)
    assert [r.index for r in merged.results] == list(range(5))
    assert [r.row for r in merged.results] == [0, 10, 1, 11, 2]  # interleaved by start time
    assert [r.start for r in merged.results] == [1000.0, 1000.5, 1001.0, 1001.5, 1002.0]
    assert merged.itl.exact and merged.itl.sample().size == 10
    assert list(merged.itl.sample([1])) == pytest.approx([0.1, 0.2])  # worker B's first request, renumbered 1
