"""Reading a server-sent event stream (``text/event-stream``), as OpenAI-protocol servers send a streamed reply.

The whole body is read first (the HTTP client returns it when the stream ends); it is split into events at blank
lines (``\\n\\n``, ``\\r\\n\\r\\n`` or ``\\r\\r``), each event's ``data:`` lines joined, comments (``:``) and other
fields skipped, and the events read up to ``data: [DONE]``. Every data payload must be JSON: a stream that is not
(a proxy's error page) raises ``ValueError``, which the client treats as a malformed reply and retries. One line
longer than ``max_event_bytes`` raises ``ReplyTooLarge`` (the request fails, unretried); JSON nested deeper than
``max_json_depth`` is malformed.
"""
from __future__ import annotations

import re
from typing import Any

from promptweave.models.reply_limits import ReplyLimits, ReplyTooLarge, loads

_BLANK_LINE = re.compile(r"\r\n\r\n|\r\r|\n\n")
_LINE = re.compile(r"\r\n|\r|\n")


def data_payloads(body: bytes | str, max_event_bytes: int = ReplyLimits.max_event_bytes) -> list[str]:
    """The ``data`` of each event, in order, up to (not including) ``[DONE]``."""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    out = []
    for block in _BLANK_LINE.split(text):
        if len(block) > max_event_bytes:
            lines = _LINE.split(block.strip())
            if any(len(ln) > max_event_bytes for ln in lines):
                raise ReplyTooLarge(f"an event-stream line is longer than {max_event_bytes} bytes (max_event_bytes)")
        lines = [ln for ln in _LINE.split(block.strip()) if ln and not ln.startswith(":")]
        data = [ln[5:].strip() for ln in lines if ln.startswith("data:")]
        if not data:  # an event of other fields only (event:, id:, retry:) carries nothing to read
            continue
        payload = "\n".join(data)
        if payload == "[DONE]":
            break
        out.append(payload)
    return out


def json_events(body: bytes | str, limits: ReplyLimits | None = None) -> list[Any]:
    """Each event's data as JSON (``ValueError`` when one is not JSON, or when the body holds no event)."""
    limits = limits or ReplyLimits()
    payloads = data_payloads(body, limits.max_event_bytes)
    if not payloads:
        raise ValueError("the event stream holds no data events")
    return [loads(p, limits.max_json_depth) for p in payloads]
