"""Inter-token latencies of a whole run in bounded memory.

Up to ``cap`` gaps are kept exactly (4-byte floats, grouped by request), so the statistics of an ordinary run are
exact and any subset of its requests (the steady-state stage) can be read back. Past ``cap`` the store switches to
log-spaced histograms (0.1% relative bucket width): one of every request, and one of the requests sent while the
concurrency was at its maximum (the steady-state stage's ITL, decided as each request is sent).
"""
from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable

import numpy as np

_LOG_STEP = math.log1p(0.001)
_ZERO = -(1 << 40)


class LogHistogram:
    """Counts of values in buckets ``[g**k, g**(k+1))`` (g = 1.001), plus exact count, sum, min and max."""

    def __init__(self) -> None:
        self.counts: Counter[int] = Counter()
        self.n = 0
        self.total = 0.0
        self.lo = math.inf
        self.hi = -math.inf

    def add_many(self, values: Iterable[float]) -> None:
        for v in values:
            v = float(v)
            self.n += 1
            self.total += v
            self.lo = min(self.lo, v)
            self.hi = max(self.hi, v)
            self.counts[_ZERO if v <= 0 else math.floor(math.log(v) / _LOG_STEP)] += 1

    def quantile(self, q: float) -> float:
        """The value at rank ``q × (n − 1)`` (the bucket's geometric middle; exact at the ends)."""
        if not self.n:
            return 0.0
        rank = q * (self.n - 1)
        if rank <= 0:
            return self.lo
        if rank >= self.n - 1:
            return self.hi
        seen = 0
        for k in sorted(self.counts):
            seen += self.counts[k]
            if seen > rank:
                if k == _ZERO:
                    return 0.0
                return min(self.hi, max(self.lo, math.exp((k + 0.5) * _LOG_STEP)))
        return self.hi


class ItlStore:
    """The run's ITL gaps (seconds): exact up to ``cap`` values, then histograms."""

    def __init__(self, cap: int = 4_000_000) -> None:
        self.cap = cap
        self.values = array("f")
        self.starts: dict[int, tuple[int, int]] = {}  # request index -> (offset, count) in ``values``
        self.all: LogHistogram | None = None
        self.full: LogHistogram | None = None  # requests sent at the maximum concurrency

    @property
    def exact(self) -> bool:
        return self.all is None

    def add(self, index: int, gaps: list[float], at_max: bool) -> None:
        if not gaps:
            return
        if self.all is None and len(self.values) + len(gaps) > self.cap:
            self._overflow()
        if self.all is None:
            self.starts[index] = (len(self.values), len(gaps))
            self.values.extend(gaps)
            return
        self.all.add_many(gaps)
        if at_max:
            self.full.add_many(gaps)  # type: ignore[union-attr]

    def _overflow(self) -> None:
        self.all, self.full = LogHistogram(), LogHistogram()
        self.all.add_many(self.values)
        # the requests already kept exactly were sent before the switch: their stage membership is not known
        # online, so the steady-state histogram starts from here
        self.values = array("f")
        self.starts = {}

    def sample(self, indices: Iterable[int] | None = None) -> np.ndarray | LogHistogram:
        """The gaps of the given requests (all when None): an array when exact, else the matching histogram."""
        if self.all is not None:
            return self.all if indices is None else self.full  # type: ignore[return-value]
        arr = np.frombuffer(self.values, dtype=np.float32).astype(np.float64) if self.values else np.zeros(0)
        if indices is None:
            return arr
        parts = [arr[o:o + n] for o, n in (self.starts[i] for i in indices if i in self.starts)]
        return np.concatenate(parts) if parts else np.zeros(0)


def merge_stores(parts: list[tuple[ItlStore, dict[int, int], set[int]]], cap: int = 4_000_000) -> ItlStore:
    """One store from several workers' stores: ``(store, old index → new index, new indices sent at the
    maximum)`` each. Exact parts stay exact while the total fits ``cap``; a part already in histograms makes the
    whole a histogram."""
    out = ItlStore(cap)
    for store, mapping, at_max in parts:
        if store.all is not None:
            if out.all is None:
                out._overflow()
            _absorb(out.all, store.all)  # type: ignore[arg-type]
            _absorb(out.full, store.full)  # type: ignore[arg-type]
            continue
        for old, new in mapping.items():
            if old in store.starts:
                o, n = store.starts[old]
                out.add(new, list(store.values[o:o + n]), new in at_max)
    return out


def _absorb(into: LogHistogram, src: LogHistogram) -> None:
    into.counts.update(src.counts)
    into.n += src.n
    into.total += src.total
    into.lo = min(into.lo, src.lo)
    into.hi = max(into.hi, src.hi)
