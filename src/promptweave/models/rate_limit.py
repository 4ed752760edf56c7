"""Request pacing for the HTTP backends: ``rpm`` (or OpenCompass's ``query_per_second``, times 60) request
starts a minute, spaced evenly rather than sent in bursts.

The limiter reads time through a :class:`Clock`, so a test can drive it with a virtual one and check the
spacing without waiting or timing anything.
"""
from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """Where the limiter reads the time and waits."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The monotonic clock and the event loop's sleep."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class RateLimiter:
    """Spaces request starts evenly so no more than ``rpm`` start in any minute (no limit when ``rpm`` is
    falsy). One limiter serves one batch's workers, all on one event loop."""

    def __init__(self, rpm: float | None, clock: Clock | None = None) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self.clock: Clock = clock or SystemClock()
        self._next = 0.0
        self._lock: asyncio.Lock | None = None

    async def acquire(self) -> None:
        """Return when the caller may start its request."""
        if not self.interval:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            now = self.clock.now()
            wait = self._next - now
            self._next = max(now, self._next) + self.interval
        if wait > 0:
            await self.clock.sleep(wait)


__all__ = ["Clock", "RateLimiter", "SystemClock"]
