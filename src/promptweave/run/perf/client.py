"""The load generator: streamed requests from ``concurrency`` workers on one event loop, each timed as it arrives.

Each worker sends its next request as soon as its last one completed (closed loop), or, when the run is paced,
at its scheduled time if later. Bodies are built and encoded before the clock starts; the clock starts just
before the write (``ArrivalLog.sent``) and each read is stamped as it arrives, with nothing parsed until the reply
is complete. Connections are kept alive, one per worker.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from promptweave.models.arrivals import ArrivalLog
from promptweave.models.openai_compat import ReplyOversize, TransportError
from promptweave.run.perf.itl_store import ItlStore
from promptweave.run.perf.measure import RequestResult, TokenCounter, failed, measure


@dataclass(frozen=True)
class PerfRequest:
    """One request to send: its row, URL path, body and the prompt text (for counting input tokens)."""

    row: int
    path: str
    body: dict
    prompt_text: str


@dataclass
class LoadOutcome:
    results: list[RequestResult]
    itl: ItlStore
    started: float
    finished: float


async def generate_load(model: Any, requests: Iterator[PerfRequest], *, concurrency: int,
                        offsets: list[float] | None = None, duration: float | None = None,
                        counter: TokenCounter | None = None, itl: ItlStore | None = None,
                        progress: Callable[[int], None] | None = None) -> LoadOutcome:
    """Send every request of ``requests`` (or, with ``duration``, as many as start within that many seconds)."""
    client = model.http_client(concurrency)
    itl = itl if itl is not None else ItlStore()
    results: list[RequestResult] = []
    state = {"in_flight": 0, "next": 0}
    limits = model.limits
    base = model.base_url
    loop = asyncio.get_running_loop()
    start = time.perf_counter()
    stop_at = start + duration if duration else None

    def sink(gaps: list[float], r: RequestResult) -> None:
        itl.add(r.index, gaps, r.in_flight >= concurrency)

    async def worker() -> None:
        while True:
            if stop_at is not None and time.perf_counter() >= stop_at:
                return
            if offsets is not None and state["next"] >= len(offsets):
                return
            try:
                req = next(requests)
            except StopIteration:
                return
            k = state["next"]
            state["next"] += 1
            if offsets is not None:
                wait = start + offsets[k] - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
            chat = req.path.endswith("/chat/completions")
            log = ArrivalLog()
            state["in_flight"] += 1
            in_flight = state["in_flight"]
            try:
                reply = await client.post(base + req.path, req.body, log)
            except (TransportError, ReplyOversize) as exc:
                r = failed(k, log, f"{type(exc).__name__}: {exc}", in_flight)
            else:
                r = measure(k, reply.status_code, reply.content, log, chat=chat, prompt_text=req.prompt_text,
                            counter=counter, limits=limits, in_flight=in_flight, itl_sink=sink)
            finally:
                state["in_flight"] -= 1
            r.row = req.row
            results.append(r)
            if progress is not None:
                progress(1)

    n = concurrency if offsets is None else min(concurrency, len(offsets))
    tasks = [loop.create_task(worker()) for _ in range(max(1, n))]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await client.aclose()
    results.sort(key=lambda r: r.index)
    return LoadOutcome(results, itl, start, time.perf_counter())
