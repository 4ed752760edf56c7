"""AISBench's ``request_rate``: the start schedule of a batch's requests, on a fake clock (no wall time measured)."""
from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.compat.models import model_notes
from promptweave.errors import ConfigError
from promptweave.models.base import GenerationParams
from promptweave.models.factory import build_model
from promptweave.models.pacing import MIN_RATE, RequestPacer, start_offsets, traffic_settings


class FakeClock:
    """A clock that moves only when something sleeps on it."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


def test_equal_gaps_without_burstiness():
    # gaps of 1/rate, cumulative, and AISBench's clock starting one gap late
    assert start_offsets(4, 2.0, {"burstiness": 0}) == [1.0, 1.5, 2.0, 2.5]
    assert start_offsets(1, 0.5, {"burstiness": 0}) == [4.0]


@pytest.mark.parametrize("rate", [0, 0.0009, None])
def test_a_rate_below_the_threshold_paces_nothing(rate):
    assert start_offsets(5, rate or 0) == []
    assert MIN_RATE == 0.001


@settings(deadline=None, max_examples=60)
@given(n=st.integers(1, 200), rate=st.floats(0.01, 500), burst=st.floats(0.05, 5), seed=st.integers(0, 2**16))
def test_gamma_gaps_are_scaled_to_n_over_rate(n, rate, burst, seed):
    got = start_offsets(n, rate, {"burstiness": burst}, rng=random.Random(seed))
    assert len(got) == n
    assert all(b >= a for a, b in zip(got, got[1:]))
    # the cumulative gaps end at n / rate; every start is one first gap (half the first offset) later
    assert got[-1] - got[0] / 2 == pytest.approx(n / rate, rel=1e-9)


def test_linear_ramp_is_not_rescaled():
    got = start_offsets(3, 0, {"burstiness": 0, "ramp_up_strategy": "linear", "ramp_up_start_rps": 1,
                               "ramp_up_end_rps": 3})
    # rates 1, 2, 3 -> gaps 1, 0.5, 0.333: cumulative 1, 1.5, 1.833, each after the first gap
    assert got == pytest.approx([2.0, 2.5, 2.8333333])
    assert start_offsets(3, 5, {"ramp_up_strategy": "linear", "ramp_up_start_rps": 1, "ramp_up_end_rps": 0}) == []


def test_pacer_lets_each_start_go_at_its_offset():
    clock = FakeClock()
    pacer = RequestPacer([1.0, 1.5, 2.0], clock=clock, sleep=clock.sleep)
    starts = []

    async def go():
        for _ in range(4):
            await pacer.acquire()
            starts.append(clock.now)

    asyncio.run(go())
    assert starts == [101.0, 101.5, 102.0, 102.0]  # past the schedule: at once


@pytest.mark.parametrize(("cfg", "field"), [
    ({"burstiness": -1}, "burstiness"), ({"ramp_up_strategy": "steps"}, "ramp_up_strategy"),
    ({"ramp_up_strategy": "linear", "ramp_up_start_rps": 1}, "ramp_up_end_rps"), ({"bursty": 1}, "bursty")])
def test_bad_traffic_cfg_is_a_typed_error(cfg, field):
    with pytest.raises(ConfigError) as err:
        traffic_settings(cfg)
    assert err.value.field.endswith(field)


def _service(server, **kw):
    return dict(attr="service", type="VLLMCustomAPIChat", abbr="svc", path="", model="served", stream=False,
                retry=2, api_key="", host_ip="127.0.0.1", host_port=server.port, url="", max_out_len=8,
                batch_size=1, **kw)


def test_service_model_paces_request_starts(stub_server):
    model = build_model(_service(stub_server, request_rate=4, traffic_cfg=dict(burstiness=0)))
    clock = FakeClock()
    model.pacing_clock = (clock, clock.sleep)
    sent_at = []
    out = model.run_batch("chat", [[{"role": "user", "content": f"q{i}"}] for i in range(4)],
                          GenerationParams(max_out_len=8), on_result=lambda i, v: sent_at.append(clock.now))
    assert len(out) == 4 and stub_server.total_received == 4
    # one request at a time (batch_size 1): each waited for its own start, 0.25 s apart after 0.5 s
    assert sum(clock.sleeps) == pytest.approx(0.5 + 0.75)
    assert sent_at == pytest.approx([100.5, 100.75, 101.0, 101.25])
    assert not any("request_rate" in n for n in model_notes(_service(stub_server, request_rate=4)))


def test_request_rate_zero_or_absent_sends_unpaced(stub_server):
    for extra in ({}, {"request_rate": 0}):
        model = build_model(_service(stub_server, **extra))
        clock = FakeClock()
        model.pacing_clock = (clock, clock.sleep)
        model.run_batch("chat", [[{"role": "user", "content": "q"}]] * 3, GenerationParams(max_out_len=8))
        assert clock.sleeps == []


def test_bad_request_rate_is_refused(stub_server):
    with pytest.raises(ConfigError) as err:
        build_model(_service(stub_server, request_rate=-1))
    assert err.value.field == "models[].request_rate"
