"""``rpm`` / ``query_per_second`` pacing, measured on a virtual clock: every request start is timed on the clock
the limiter waits on, so the spacing is checked exactly and nothing waits in wall time."""
from __future__ import annotations

import asyncio

import pytest
from openai_stub import StubServer

from promptweave.models import build_model
from promptweave.models.base import GenerationParams
from promptweave.models.openai_compat import OpenAICompatModel
from promptweave.models.rate_limit import RateLimiter


class VirtualClock:
    """Time that moves only when someone sleeps: a sleeper yields once, then wakes at the time it went to sleep
    plus its wait, and the clock reads at least that from then on."""

    def __init__(self) -> None:
        self.t = 0.0
        self.wakes: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        wake = self.t + seconds
        self.wakes.append(wake)
        await asyncio.sleep(0)
        self.t = max(self.t, wake)


def _starts(limiter: RateLimiter, clock: VirtualClock, n: int) -> list[float]:
    async def one() -> float:
        await limiter.acquire()
        return clock.now()

    async def many() -> list[float]:
        return list(await asyncio.gather(*(one() for _ in range(n))))

    return sorted(asyncio.run(many()))


def test_concurrent_requests_start_one_interval_apart() -> None:
    clock = VirtualClock()
    starts = _starts(RateLimiter(60, clock), clock, 6)  # 60 rpm: one start a second
    assert starts == pytest.approx([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    assert clock.wakes == pytest.approx([1.0, 2.0, 3.0, 4.0, 5.0])  # the first did not wait


def test_no_window_of_a_minute_holds_more_than_rpm_starts() -> None:
    clock = VirtualClock()
    starts = _starts(RateLimiter(3, clock), clock, 7)  # 3 rpm: one start every 20 s
    assert starts == pytest.approx([0.0, 20.0, 40.0, 60.0, 80.0, 100.0, 120.0])
    assert max(sum(1 for s in starts if a <= s < a + 60) for a in starts) == 3


def test_an_idle_gap_gives_no_burst() -> None:
    clock = VirtualClock()
    limiter = RateLimiter(60, clock)
    assert _starts(limiter, clock, 2) == pytest.approx([0.0, 1.0])
    clock.t = 100.0  # a long pause: the next request goes at once, the one after it a second later
    assert _starts(limiter, clock, 3) == pytest.approx([100.0, 101.0, 102.0])


def test_without_a_rate_nothing_waits() -> None:
    clock = VirtualClock()
    assert _starts(RateLimiter(None, clock), clock, 5) == [0.0] * 5
    assert clock.wakes == []


def _ask(m: OpenAICompatModel, n: int) -> list:
    return m.chat([[{"role": "user", "content": str(i)}] for i in range(n)], GenerationParams())


def test_the_http_model_paces_its_requests_by_rpm() -> None:
    clock = VirtualClock()
    with StubServer() as srv:
        m = OpenAICompatModel(srv.url, "stub-model", api_key="k", rpm=6000, concurrency=8, backoff_base=0.0,
                              timeout=30.0, clock=clock)
        assert len(_ask(m, 5)) == 5
        assert srv.total_answered == 5
    # 6000 rpm: the first goes at once, each other one 10 ms after the one before
    assert clock.wakes == pytest.approx([0.01, 0.02, 0.03, 0.04])


def test_query_per_second_paces_like_rpm() -> None:
    clock = VirtualClock()
    with StubServer() as srv:
        m = build_model({"type": "OpenAISDK", "abbr": "paced", "path": "stub-model", "key": "k",
                         "openai_api_base": srv.url, "query_per_second": 2, "batch_size": 8})
        assert isinstance(m, OpenAICompatModel) and m.rpm == pytest.approx(120.0)
        m.clock = clock
        assert len(_ask(m, 4)) == 4
    assert clock.wakes == pytest.approx([0.5, 1.0, 1.5])  # two starts a second, evenly
