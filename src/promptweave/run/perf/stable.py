"""The steady-state stage: the requests sent while the concurrency was at its maximum.

As AISBench's ``stable_stage`` finds it: walk the sends and completions in time order, counting requests in flight.
The stage opens at the second send that brings the count to the maximum (the first such request is left out); from
then each send with at least 98% of the maximum in flight joins it. It closes at the completion that drops the
count below that level when no send within 1 ms brings it back, or at the first completion after the last send.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_WAVE = 0.02
_GAP = 0.001


@dataclass(frozen=True)
class StableWindow:
    start: float
    end: float
    members: list[int]  # positions in the input order

    @property
    def duration(self) -> float:
        return self.end - self.start


def stable_window(starts: Sequence[float], ends: Sequence[float], max_concurrency: int) -> StableWindow | None:
    """The steady-state window of requests ``(starts[i], ends[i])``, or None when the maximum was never held."""
    n = len(starts)
    if n == 0 or max_concurrency < 1:
        return None
    # (time, kind, position): a completion sorts before a send at the same instant (kind 0 before 1)
    events = sorted([(t, 1, i) for i, t in enumerate(starts)] + [(t, 0, i) for i, t in enumerate(ends)])
    level = int(max_concurrency * (1 - _WAVE))
    members: list[int] = []
    open_at = close_at = 0.0
    in_flight = sent = 0
    for k, (t, kind, i) in enumerate(events):
        if kind == 1:
            in_flight += 1
            sent += 1
            if in_flight == max_concurrency:
                members.append(i)
                if len(members) == 2:
                    open_at = t
            elif in_flight >= level and len(members) > 2:
                members.append(i)
            continue
        in_flight -= 1
        if sent == n:
            close_at = t
            break
        if len(members) > 1 and in_flight < level:
            back, recovered = in_flight, False
            for t2, kind2, _ in events[k + 1:]:
                if t2 - t > _GAP:
                    break
                back += 1 if kind2 == 1 else -1
                if kind2 == 1 and back >= level:
                    recovered = True
                    break
            if not recovered:
                close_at = t
                break
    if len(members) < 2 or close_at <= open_at:
        return None
    return StableWindow(open_at, close_at, members[1:])
