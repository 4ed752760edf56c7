"""When each request may be sent: AISBench's ``request_rate`` and ``traffic_cfg``.

``request_rate`` is requests per second (below 0.001: no pacing, every request as soon as the concurrency allows).
Gaps between sends are Gamma-distributed with shape ``burstiness`` (``traffic_cfg.burstiness``, default 1:
Poisson arrivals) and mean ``1 / rate``; ``burstiness`` 0 gives evenly spaced (uniform) sends. Without a ramp the
send times are scaled so the last is at ``n / rate`` (plus the first gap: AISBench's clock starts at it). ``ramp_up_strategy`` ``linear`` or ``exponential`` moves the
rate from ``ramp_up_start_rps`` to ``ramp_up_end_rps`` over the run. The concurrency cap applies on top: a request
whose time has come waits for a free slot.
"""
from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from promptweave.errors import PerfConfigError
from promptweave.models.pacing import start_offsets

_MIN_RATE = 0.001


@dataclass(frozen=True)
class Traffic:
    rate: float = 0.0
    burstiness: float = 1.0
    ramp: str | None = None
    ramp_start: float = 0.0
    ramp_end: float = 0.0
    seed: int = 0

    @property
    def paced(self) -> bool:
        return (self.ramp_end if self.ramp else self.rate) >= _MIN_RATE


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise PerfConfigError("must be a number ≥ 0", field=field, value=value)
    return float(value)


def traffic_from(rate: Any, traffic_cfg: Any, seed: int = 0) -> Traffic:
    """A checked :class:`Traffic` from a model's ``request_rate`` and ``traffic_cfg``."""
    r = _number(rate or 0, "models[].request_rate")
    if traffic_cfg is None:
        traffic_cfg = {}
    if not isinstance(traffic_cfg, Mapping):
        raise PerfConfigError("traffic_cfg must be a dict", field="models[].traffic_cfg", value=traffic_cfg)
    burst = _number(traffic_cfg.get("burstiness", 1.0), "models[].traffic_cfg.burstiness")
    ramp = traffic_cfg.get("ramp_up_strategy") or None
    if ramp is not None and ramp not in ("linear", "exponential"):
        raise PerfConfigError("ramp_up_strategy must be 'linear' or 'exponential'",
                              field="models[].traffic_cfg.ramp_up_strategy", value=ramp)
    start = _number(traffic_cfg.get("ramp_up_start_rps", 0) or 0, "models[].traffic_cfg.ramp_up_start_rps")
    end = _number(traffic_cfg.get("ramp_up_end_rps", 0) or 0, "models[].traffic_cfg.ramp_up_end_rps")
    return Traffic(r, burst, ramp, start, end, seed)


def send_offsets(traffic: Traffic, n: int) -> list[float] | None:
    """Seconds from the run's start at which request ``i`` may go, or None when unpaced: the schedule accuracy mode
    paces AISBench service models with (``models/pacing.py``), seeded."""
    if not traffic.paced or n <= 0:
        return None
    cfg: dict[str, object] = {"burstiness": traffic.burstiness}
    if traffic.ramp:
        cfg.update(ramp_up_strategy=traffic.ramp, ramp_up_start_rps=traffic.ramp_start,
                   ramp_up_end_rps=traffic.ramp_end)
    return start_offsets(n, traffic.rate, cfg, random.Random(traffic.seed)) or None
