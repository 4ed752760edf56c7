"""When each part of a streamed reply arrived: the timing record a serving benchmark reads.

The HTTP client (``models/openai_compat.py``) fills an :class:`ArrivalLog` while a reply arrives: the time just
before the request is written, and for each read from the socket its arrival time (``time.perf_counter()``,
taken first thing in ``data_received``) and how many body bytes had arrived by then. Nothing is parsed on that
path. Once the reply is complete, :func:`timed_events` splits its server-sent event body into events and gives
each the arrival time of the read that brought its last byte.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from promptweave.models.reply_limits import ReplyLimits, ReplyTooLarge, loads

_SEPARATOR = re.compile(rb"\r\n\r\n|\r\r|\n\n")
_LINE = re.compile(rb"\r\n|\r|\n")


@dataclass
class ArrivalLog:
    """One request's timing: ``sent`` (just before the write), then per read ``times[i]`` and ``offsets[i]``
    (body bytes received by then; :data:`END` once the reply was complete)."""

    END = 1 << 62

    sent: float = 0.0
    times: list[float] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)

    @property
    def done(self) -> float:
        """The arrival time of the read that completed the reply (``sent`` when nothing arrived)."""
        return self.times[-1] if self.times else self.sent

    def at(self, end: int) -> float:
        """The arrival time of the first read by which ``end`` body bytes had arrived."""
        i = bisect.bisect_left(self.offsets, end)
        return self.times[i] if i < len(self.times) else self.done


def event_spans(body: bytes, max_event_bytes: int = ReplyLimits.max_event_bytes) -> list[tuple[int, str]]:
    """``(end offset, data)`` of each data event of an event-stream body, in order, up to ``[DONE]``.

    The end offset is where the event's last line ends in the body (before the blank line that closes it).
    Comment lines and other fields are skipped, as ``models/sse.py`` reads them.
    """
    out: list[tuple[int, str]] = []
    pos = 0
    n = len(body)
    while pos < n:
        m = _SEPARATOR.search(body, pos)
        stop = m.start() if m else n
        block = body[pos:stop]
        pos = m.end() if m else n
        if len(block) > max_event_bytes and any(len(ln) > max_event_bytes for ln in _LINE.split(block)):
            raise ReplyTooLarge(f"an event-stream line is longer than {max_event_bytes} bytes (max_event_bytes)")
        data = [ln[5:].strip() for ln in _LINE.split(block.strip()) if ln.startswith(b"data:")]
        if not data:
            continue
        payload = b"\n".join(data).decode("utf-8")
        if payload == "[DONE]":
            break
        out.append((stop, payload))
    return out


def timed_events(body: bytes, log: ArrivalLog, limits: ReplyLimits | None = None) -> list[tuple[float, Any]]:
    """Each data event of ``body`` as JSON, with the arrival time of the read that completed it.

    ``ValueError`` when an event is not JSON; ``ReplyTooLarge`` when one line passes ``max_event_bytes``.
    """
    limits = limits or ReplyLimits()
    return [(log.at(end), loads(data, limits.max_json_depth))
            for end, data in event_spans(body, limits.max_event_bytes)]
