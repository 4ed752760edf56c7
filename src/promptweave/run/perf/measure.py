"""One streamed request's figures, from its reply and the arrival times of the reads that brought it.

Definitions (AISBench's): TTFT is from just before the request was written to the arrival of the first event that
carries generated text; E2EL from the same point to the arrival of the read that completed the reply; ITL the gaps
between consecutive text-carrying events; TPOT = (E2EL − TTFT) / (output tokens − 1) (0 for one token);
per-request output-token throughput = output tokens / E2EL.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from promptweave.models.arrivals import ArrivalLog, timed_events
from promptweave.models.reply_limits import ReplyLimits, ReplyTooLarge


@dataclass(slots=True)
class RequestResult:
    """What is kept of one request: scalars only (its ITL gaps go to the run's bounded store)."""

    index: int  # the request's place in send order
    start: float  # perf_counter just before the write
    end: float  # perf_counter at the read that completed the reply (or at the failure)
    ok: bool
    error: str = ""
    ttft: float = 0.0
    e2el: float = 0.0
    tpot: float = 0.0
    itl_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    input_source: str = ""
    output_source: str = ""
    in_flight: int = 0  # requests in flight when this one was sent, itself included
    content_events: int = 0
    row: int = -1  # the dataset row it was built from
    decoded: bool = False  # at least one non-zero ITL gap (AISBench counts these as TPOT's and ITL's N)

    @property
    def throughput(self) -> float:
        return self.output_tokens / self.e2el if self.e2el > 0 else 0.0


TokenCounter = Callable[[str], int]


def _piece(event: Any, chat: bool) -> str:
    """The generated text an event carries (chat: content or reasoning of every choice; completions: text)."""
    choices = event.get("choices") if isinstance(event, dict) else None
    if not isinstance(choices, list):
        raise ValueError("a stream event without a choices list")
    out = []
    for c in choices:
        if not isinstance(c, dict):
            continue
        if chat:
            delta = c.get("delta")
            if isinstance(delta, dict):
                for key in ("content", "reasoning_content", "reasoning"):
                    v = delta.get(key)
                    if isinstance(v, str) and v:
                        out.append(v)
        else:
            v = c.get("text")
            if isinstance(v, str) and v:
                out.append(v)
    return "".join(out)


def _usage_count(usage: Any, key: str) -> int | None:
    v = usage.get(key) if isinstance(usage, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def measure(index: int, status: int, content: bytes, log: ArrivalLog, *, chat: bool, prompt_text: str,
            counter: TokenCounter | None, limits: ReplyLimits, in_flight: int,
            itl_sink: Callable[[list[float], RequestResult], None]) -> RequestResult:
    """The figures of a completed HTTP exchange; a reply that is not a usable stream is a failed request."""
    r = RequestResult(index, log.sent, log.done, False, in_flight=in_flight)
    if status != 200:
        r.error = f"HTTP {status}: {content[:160].decode('utf-8', 'replace')}"
        return r
    if content.lstrip()[:1] == b"{":
        r.error = "the server answered with one JSON reply, not an event stream"
        return r
    try:
        events = timed_events(content, log, limits)
    except ReplyTooLarge as exc:
        r.error = str(exc)
        return r
    except ValueError as exc:
        r.error = f"malformed event stream: {exc}"
        return r
    times: list[float] = []
    pieces: list[str] = []
    usage: Any = None
    try:
        for t, ev in events:
            if isinstance(ev, dict) and ev.get("usage"):
                usage = ev["usage"]
            piece = _piece(ev, chat)
            if piece:
                times.append(t)
                pieces.append(piece)
    except ValueError as exc:
        r.error = f"malformed event stream: {exc}"
        return r
    if not times:
        r.error = "the stream carried no generated text"
        return r
    r.ok = True
    r.content_events = len(times)
    r.ttft = times[0] - log.sent
    r.e2el = log.done - log.sent
    gaps = [b - a for a, b in zip(times, times[1:])]
    r.itl_count = len(gaps)
    r.decoded = any(g > 0 for g in gaps)
    out = _usage_count(usage, "completion_tokens")
    if out is not None:
        r.output_tokens, r.output_source = out, "usage"
    elif counter is not None:
        r.output_tokens, r.output_source = counter("".join(pieces)), "tokenizer"
    else:
        r.output_tokens, r.output_source = len(times), "events"
    inp = _usage_count(usage, "prompt_tokens")
    if inp is not None:
        r.input_tokens, r.input_source = inp, "usage"
    elif counter is not None:
        r.input_tokens, r.input_source = counter(prompt_text), "tokenizer"
    else:
        r.input_tokens, r.input_source = 0, "none"
    r.tpot = (r.e2el - r.ttft) / (r.output_tokens - 1) if r.output_tokens > 1 else 0.0
    itl_sink(gaps, r)
    return r


def failed(index: int, log: ArrivalLog, error: str, in_flight: int) -> RequestResult:
    """A request that got no complete reply (refused, dropped, cut off, past its deadline)."""
    now = time.perf_counter()
    return RequestResult(index, log.sent or now, now, False, error=error, in_flight=in_flight)
