"""What a server's reply may cost us: total time, bytes on the wire, bytes after inflating, one event, JSON depth.

A server is untrusted input. Each bound is a model setting with a safe default, so a hostile or broken server
(a body dripping one byte at a time, a reply that never ends, a gigabyte of JSON, a small gzip bomb, JSON nested
two hundred thousand deep) costs one failed row and a bounded amount of memory and time, never the run.

| setting            | default          | bounds                                                              |
|--------------------|------------------|---------------------------------------------------------------------|
| ``timeout``        | 120 s            | silence: the longest wait for the next byte                         |
| ``deadline``       | 4 × ``timeout``  | one attempt from connect to the last byte (head, body, stream)      |
| ``max_reply_bytes``| 64 MiB           | the body as sent, and again after gzip / deflate inflating          |
| ``max_event_bytes``| 8 MiB            | one line of a server-sent event stream                              |
| ``max_json_depth`` | 64               | nesting of any JSON the server sends (reply, error body, one event) |
"""
from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass
from typing import Any

from promptweave.errors import ModelError

MIB = 1 << 20


@dataclass(frozen=True)
class ReplyLimits:
    """The bounds one model's requests run under (see the module docstring for each)."""

    timeout: float = 120.0
    deadline: float | None = None  # None: 4 × timeout
    max_reply_bytes: int = 64 * MIB
    max_event_bytes: int = 8 * MIB
    max_json_depth: int = 64

    def __post_init__(self) -> None:
        for name in ("timeout", "deadline"):
            value = getattr(self, name)
            if value is None and name == "deadline":
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) \
                    or value <= 0:
                raise ModelError(f"{name} must be a positive number of seconds", field=f"models[].{name}",
                                 value=value)
        for name in ("max_reply_bytes", "max_event_bytes", "max_json_depth"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ModelError(f"{name} must be a positive whole number", field=f"models[].{name}", value=value)

    @property
    def total(self) -> float:
        """Seconds one attempt may take from the first byte sent to the last byte read."""
        return float(self.deadline) if self.deadline is not None else 4.0 * self.timeout


class ReplyTooLarge(ValueError):
    """A reply (or one event of it) past its size bound: the request fails; asking again would get the same."""


def inflate(content: bytes, encoding: str, limit: int) -> bytes:
    """``content`` inflated per its ``Content-Encoding`` (gzip / deflate), never to more than ``limit`` bytes.

    A body that is not valid for its encoding is returned as sent (the JSON check then calls it malformed).
    """
    if encoding not in ("gzip", "deflate"):
        return content
    d = zlib.decompressobj(47 if encoding == "gzip" else 15)
    try:
        out = d.decompress(content, limit + 1)
    except zlib.error:
        return content
    if len(out) > limit or d.unconsumed_tail:
        raise ReplyTooLarge(f"the reply inflates to more than {limit} bytes (max_reply_bytes)")
    return out


def loads(data: bytes | str, max_depth: int = ReplyLimits.max_json_depth) -> Any:
    """JSON from a server: ``ValueError`` when it is not JSON or nests deeper than ``max_depth``.

    Python's parser recurses, so hostile nesting would otherwise surface as ``RecursionError`` from wherever the
    value is next walked; here it is an ordinary malformed reply.
    """
    try:
        value = json.loads(data)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {max_depth} levels") from None
    if len(data) > 2 * max_depth and _deeper_than(value, max_depth):
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    return value


def _deeper_than(value: Any, max_depth: int) -> bool:
    """Whether ``value`` nests more than ``max_depth`` containers deep (iterative: no recursion to exhaust)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            children: Any = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False
