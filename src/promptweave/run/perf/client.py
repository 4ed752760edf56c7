"""The load generator: streamed requests from ``concurrency`` workers on one event loop, each timed as it arrives.

Each worker sends its next request as soon as its last one completed (closed loop), or, when the run is paced,
at its scheduled time if later; completed replies are parsed by one reader task, one per loop turn, so parsing
never holds back a send or a timestamp. Bodies are built and encoded before the clock starts; the clock starts just
before the write (``ArrivalLog.sent``) and each read is stamped as it arrives, with nothing parsed until the reply
is complete. Connections are kept alive, one per worker.
"""
from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from promptweave.models.arrivals import ArrivalLog
from promptweave.models.openai_compat import ReplyOversize, TransportError
from promptweave.run.perf.itl_store import ItlStore
from promptweave.run.perf.measure import RequestResult, TokenCounter, failed, measure

STAGGER = 0.001  # seconds between the starts of two workers of an unpaced level


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
                        progress: Callable[[int], None] | None = None,
                        stagger: float = STAGGER) -> LoadOutcome:
    """Send every request of ``requests`` (or, with ``duration``, as many as start within that many seconds).

    Unpaced, worker ``w`` starts ``w × stagger`` seconds after the first: requests of equal length sent at one
    instant would otherwise stay in lockstep for the whole run, every round reaching the server as one burst."""
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

    # Replies are read apart from the workers: a worker hands its completed reply over and sends its next request
    # at once; one reader parses the replies one per loop turn, so reads arriving meanwhile are stamped between
    # two parses, never after a burst of them.
    backlog: deque[tuple[int, PerfRequest, Any, ArrivalLog, int]] = deque()
    wake = asyncio.Event()
    room = asyncio.Event()
    room.set()
    limit = 2 * concurrency
    finished = {"workers": False}

    def done(r: RequestResult, row: int) -> None:
        r.row = row
        results.append(r)
        if progress is not None:
            progress(1)

    async def reader() -> None:
        while True:
            if not backlog:
                if finished["workers"]:
                    return
                wake.clear()
                await wake.wait()
                continue
            k, req, reply, log, in_flight = backlog.popleft()
            r = measure(k, reply.status_code, reply.content, log, chat=req.path.endswith("/chat/completions"),
                        prompt_text=req.prompt_text, counter=counter, limits=limits, in_flight=in_flight,
                        itl_sink=sink)
            done(r, req.row)
            if len(backlog) < limit:
                room.set()
            await asyncio.sleep(0)

    async def worker(w: int) -> None:
        if offsets is None and w and stagger > 0:  # unpaced: the workers start ``stagger`` apart (docstring)
            await asyncio.sleep(w * stagger)
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
            log = ArrivalLog()
            state["in_flight"] += 1
            in_flight = state["in_flight"]
            try:
                reply = await client.post(base + req.path, req.body, log)
            except (TransportError, ReplyOversize) as exc:
                done(failed(k, log, f"{type(exc).__name__}: {exc}", in_flight), req.row)
                continue
            finally:
                state["in_flight"] -= 1
            backlog.append((k, req, reply, log, in_flight))
            wake.set()
            if len(backlog) >= limit:  # the reader is behind: wait rather than hold unbounded replies
                room.clear()
                await room.wait()

    n = concurrency if offsets is None else min(concurrency, len(offsets))
    tasks = [loop.create_task(worker(w)) for w in range(max(1, n))]
    reading = loop.create_task(reader())
    try:
        await asyncio.gather(*tasks)
        finished["workers"] = True
        wake.set()
        await reading
    finally:
        for t in (*tasks, reading):
            t.cancel()
        await client.aclose()
    results.sort(key=lambda r: r.index)
    return LoadOutcome(results, itl, start, time.perf_counter())
