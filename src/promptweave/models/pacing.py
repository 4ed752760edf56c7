"""AISBench's ``request_rate``: when each request of a batch may start.

An AISBench service model with ``request_rate`` (requests per second) sends its requests on a schedule made
before the first one: the gaps between starts are drawn from a gamma distribution of mean ``1 / request_rate``
(shape ``burstiness``, from the model's ``traffic_cfg``, 1.0 by default: Poisson arrivals; 0: equal gaps), then
scaled so that the last start falls at ``n / request_rate``; ``traffic_cfg.ramp_up_strategy`` (``linear`` or
``exponential``, from ``ramp_up_start_rps`` to ``ramp_up_end_rps``) makes the rate change over the batch instead
(not scaled). Request ``i`` starts at ``d[0] + d[i]`` after the batch begins (``d`` the cumulative gaps: AISBench
starts its clock at the first gap, so the first request waits twice that). A rate below 0.001 paces nothing.
How many requests run at once is still the model's ``batch_size`` (concurrency); retries are not paced again.

:class:`RequestPacer` holds such a schedule for one batch; its clock and sleep are injectable, so tests check the
schedule on a fake clock.
"""
from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from promptweave.errors import ConfigError

MIN_RATE = 0.001
"""Below this ``request_rate`` (and ramp end rate) requests are not paced (AISBench's threshold)."""

RAMPS = ("linear", "exponential")


def traffic_settings(traffic_cfg: Any, *, where: str = "models[].traffic_cfg") -> dict[str, Any]:
    """``traffic_cfg`` checked: ``burstiness`` (>= 0), ``ramp_up_strategy`` with its two rates."""
    if traffic_cfg is None:
        return {}
    if not isinstance(traffic_cfg, Mapping):
        raise ConfigError("traffic_cfg must be a dict", field=where, value=traffic_cfg,
                          expected="dict(burstiness=1.0, ramp_up_strategy='linear', ramp_up_start_rps=..., "
                                   "ramp_up_end_rps=...)")
    known = {"burstiness", "ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps"}
    extra = sorted(set(traffic_cfg) - known)
    if extra:
        raise ConfigError("unknown traffic_cfg key", field=f"{where}.{extra[0]}", expected=", ".join(sorted(known)))
    out = dict(traffic_cfg)
    burst = out.get("burstiness", 1.0)
    if not isinstance(burst, (int, float)) or isinstance(burst, bool) or burst < 0:
        raise ConfigError("burstiness must be a number >= 0", field=f"{where}.burstiness", value=burst)
    ramp = out.get("ramp_up_strategy")
    if ramp:
        if ramp not in RAMPS:
            raise ConfigError("unknown ramp_up_strategy", field=f"{where}.ramp_up_strategy", value=ramp,
                              expected=" or ".join(RAMPS))
        for k in ("ramp_up_start_rps", "ramp_up_end_rps"):
            v = out.get(k)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                raise ConfigError(f"{ramp_up_text(ramp)} needs {k} (a number >= 0)", field=f"{where}.{k}", value=v)
    return out


def ramp_up_text(ramp: str) -> str:
    return f"ramp_up_strategy={ramp!r}"


def start_offsets(n: int, rate: float, traffic: Mapping[str, Any] | None = None,
                  rng: random.Random | None = None) -> list[float]:
    """Seconds after a batch begins at which each of its ``n`` requests may start (``[]``: not paced)."""
    traffic = traffic or {}
    ramp = traffic.get("ramp_up_strategy")
    start_rps, end_rps = float(traffic.get("ramp_up_start_rps") or 0), float(traffic.get("ramp_up_end_rps") or 0)
    final = end_rps if ramp else float(rate or 0)
    if n <= 0 or final < MIN_RATE:
        return []
    burst = float(traffic.get("burstiness", 1.0))
    rng = rng or random.Random()
    gaps: list[float] = []
    for i in range(n):
        progress = i / max(n - 1, 1)
        if ramp == "linear":
            r = start_rps + (end_rps - start_rps) * progress
        elif ramp == "exponential":
            r = end_rps if start_rps <= 0 else start_rps * (end_rps / start_rps) ** progress
        else:
            r = float(rate)
        if r < 1e-9:
            gaps.append(0.0)
        elif burst == 0:
            gaps.append(1.0 / r)
        else:
            gaps.append(rng.gammavariate(burst, 1.0 / (r * burst)))
    cum: list[float] = []
    total = 0.0
    for g in gaps:
        total += g
        cum.append(total)
    if not ramp and cum[-1] > 0:
        scale = n / float(rate) / cum[-1]
        cum = [c * scale for c in cum]
    return [cum[0] + c for c in cum]


class RequestPacer:
    """Lets the ``i``-th caller of :meth:`acquire` go at ``begin + offsets[i]`` (``begin``: the first call);
    callers past the schedule go at once. ``clock`` / ``sleep``: ``time.monotonic`` / ``asyncio.sleep`` unless a
    test gives others."""

    def __init__(self, offsets: Sequence[float], *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.offsets = list(offsets)
        self.clock = clock
        self.sleep = sleep
        self.begin: float | None = None
        self.issued = 0

    async def acquire(self) -> None:
        if not self.offsets:
            return
        if self.begin is None:
            self.begin = self.clock()
        i = self.issued
        self.issued += 1
        if i >= len(self.offsets):
            return
        wait = self.begin + self.offsets[i] - self.clock()
        if wait > 0:
            await self.sleep(wait)
