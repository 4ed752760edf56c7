"""Reading a server-sent event stream (``text/event-stream``), as OpenAI-protocol servers send a streamed reply.

The whole body is read first (the HTTP client returns it when the stream ends); it is split into events at blank
lines (``\\n\\n``, ``\\r\\n\\r\\n`` or ``\\r\\r``), each event's ``data:`` lines joined, comments (``:``) and other
fields skipped, and the events read up to ``data: [DONE]``. Every data payload must be JSON: a stream that is not
(a proxy's error page) raises ``ValueError``, which the client treats as a malformed reply and retries.
"""
from __future__ import annotations

import json
import re
from typing import Any

_BLANK_LINE = re.compile(r"\r\n\r\n|\r\r|\n\n")
_LINE = re.compile(r"\r\n|\r|\n")


def data_payloads(body: bytes | str) -> list[str]:
    """The ``data`` of each event, in order, up to (not including) ``[DONE]``."""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    out = []
    for block in _BLANK_LINE.split(text):
        lines = [ln for ln in _LINE.split(block.strip()) if ln and not ln.startswith(":")]
        data = [ln[5:].strip() for ln in lines if ln.startswith("data:")]
        if not data:  # an event of other fields only (event:, id:, retry:) carries nothing to read
            continue
        payload = "\n".join(data)
        if payload == "[DONE]":
            break
        out.append(payload)
    return out


def json_events(body: bytes | str) -> list[Any]:
    """Each event's data as JSON (``ValueError`` when one is not JSON, or when the body holds no event)."""
    payloads = data_payloads(body)
    if not payloads:
        raise ValueError("the event stream holds no data events")
    return [json.loads(p) for p in payloads]
