"""A loopback streaming server with known timing: the first token ``t0`` seconds after a request arrives, then one
token every ``t1`` seconds, ``tokens`` tokens (fewer when ``max_tokens`` asks for fewer), as an OpenAI-protocol
server streams them (chunked ``text/event-stream``, one ``data:`` event per token, the usage event when
``stream_options.include_usage`` asks for it, then ``data: [DONE]``).

Send times are fixed from the request's arrival (each token's ``call_at`` is its own, so lateness never accumulates), and the
server records when it actually wrote each first and last token: ``GET /truth`` returns those figures (the truth a
client's measurement is compared with); ``GET /truth?marks=1`` gives, per request whose body has a ``user``
string, its (arrival, first write, last write) ``time.perf_counter()`` stamps (one clock for every process on
Linux); ``?reset=1`` clears them.

In tests it runs in a thread (``TimedStreamServer``, a context manager). For measurements it runs as a process of its
own, so it shares no interpreter lock with the client: ``python tests/servers/timed_stream.py --port 0 --t0 0.15
--t1 0.04 --tokens 40`` prints ``PORT <n>`` when it listens (uvloop when installed).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Timing:
    t0: float = 0.15
    t1: float = 0.04
    tokens: int = 40
    usage: bool = True  # send the usage event when the request asks for it


@dataclass
class Truth:
    ttft: list = field(default_factory=list)
    tpot: list = field(default_factory=list)
    requests: int = 0
    bodies: list = field(default_factory=list)
    keep_bodies: int = 0
    marks: dict = field(default_factory=dict)  # request "id" (the body's "user" field) -> (arrived, first, last)

    def summary(self) -> dict[str, Any]:
        return {"requests": self.requests, "completed": len(self.ttft),
                "ttft_median": statistics.median(self.ttft) if self.ttft else None,
                "tpot_median": statistics.median(self.tpot) if self.tpot else None,
                "ttft_late_max": max(self.ttft) if self.ttft else None}


class _Stream(asyncio.Protocol):
    def __init__(self, timing: Timing, truth: Truth) -> None:
        self.timing = timing
        self.truth = truth
        self.buf = bytearray()
        self.transport: Any = None
        self.loop = asyncio.get_event_loop()
        self.handles: list = []

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        for h in self.handles:
            h.cancel()

    def data_received(self, data: bytes) -> None:
        arrived = time.perf_counter()
        at = self.loop.time()
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
            length = 0
            for line in head[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip())
            if len(self.buf) < end + 4 + length:
                return
            raw = bytes(self.buf[end + 4:end + 4 + length])
            del self.buf[:end + 4 + length]
            method, path = head[0].split(" ")[:2]
            if method == "GET":
                self._get(path)
            else:
                self._post(path, raw, arrived, at)

    def _plain(self, status: int, data: bytes) -> None:
        self.transport.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
                             % (status, len(data), data))

    def _get(self, path: str) -> None:
        if path.startswith("/truth"):
            data = json.dumps(self.truth.summary()).encode()
            if "marks=1" in path:
                data = json.dumps(self.truth.marks).encode()
            if "reset=1" in path:
                self.truth.ttft.clear()
                self.truth.tpot.clear()
                self.truth.marks.clear()
                self.truth.requests = 0
            self._plain(200, data)
        elif path.rstrip("/").endswith("/models"):
            self._plain(200, b'{"object": "list", "data": [{"id": "timed", "object": "model"}]}')
        else:
            self._plain(404, b'{"error": {"message": "no route"}}')

    def _post(self, path: str, raw: bytes, arrived: float, at: float) -> None:
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._plain(400, b'{"error": {"message": "bad json"}}')
            return
        self.truth.requests += 1
        if len(self.truth.bodies) < self.truth.keep_bodies:
            self.truth.bodies.append(body)
        chat = path.endswith("/chat/completions")
        n = min(self.timing.tokens, int(body.get("max_tokens") or self.timing.tokens))
        usage = self.timing.usage and bool((body.get("stream_options") or {}).get("include_usage"))
        sent: list[float] = []

        # one event per token, formatted from a template made once (the server's own cost stays small, so its
        # clock is the truth even with hundreds of streams)
        template = (b'data: {"object": "chunk", "choices": [{"index": 0, "delta": {"content": "tok%d "}}]}\n\n'
                    if chat else b'data: {"object": "chunk", "choices": [{"index": 0, "text": "tok%d "}]}\n\n')

        def event(k: int) -> bytes:
            data = template % k
            return b"%x\r\n%b\r\n" % (len(data), data)

        def send(k: int) -> None:
            if self.transport.is_closing():
                return
            out = event(k)
            if k == 0:
                out = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                       + out)
            if k == n - 1:
                tail = b""
                if usage:
                    u = {"object": "chunk", "choices": [],
                         "usage": {"prompt_tokens": 8, "completion_tokens": n, "total_tokens": n + 8}}
                    d = b"data: " + json.dumps(u).encode() + b"\n\n"
                    tail += b"%x\r\n%b\r\n" % (len(d), d)
                d = b"data: [DONE]\n\n"
                tail += b"%x\r\n%b\r\n0\r\n\r\n" % (len(d), d)
                out += tail
            self.transport.write(out)
            sent.append(time.perf_counter())
            if k + 1 < n:  # the next token at its fixed time (from the arrival: lateness never accumulates)
                self.handles.append(self.loop.call_at(at + self.timing.t0 + (k + 1) * self.timing.t1, send, k + 1))
            if k == n - 1:
                if isinstance(body.get("user"), str):
                    self.truth.marks[body["user"]] = (arrived, sent[0], sent[-1])
                self.truth.ttft.append(sent[0] - arrived)
                if n > 1:
                    self.truth.tpot.append((sent[-1] - sent[0]) / (n - 1))

        self.handles = [h for h in self.handles[-4:] if not h.cancelled()]
        self.handles.append(self.loop.call_at(at + self.timing.t0, send, 0))


class TimedStreamServer:
    """The server in a thread of this process (tests): ``with TimedStreamServer(Timing(...)) as s: s.port``."""

    def __init__(self, timing: Timing | None = None, keep_bodies: int = 0) -> None:
        self.timing = timing or Timing()
        self.truth = Truth(keep_bodies=keep_bodies)
        self.port = 0
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    def __enter__(self) -> "TimedStreamServer":
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        server = await serve(self.timing, self.truth, 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stop.wait()
        server.close()
        await server.wait_closed()


async def serve(timing: Timing, truth: Truth, port: int) -> Any:
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: _Stream(timing, truth), "127.0.0.1", port, backlog=4096)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--t0", type=float, default=0.15)
    ap.add_argument("--t1", type=float, default=0.04)
    ap.add_argument("--tokens", type=int, default=40)
    args = ap.parse_args()

    async def run() -> None:
        server = await serve(Timing(args.t0, args.t1, args.tokens), Truth(), args.port)
        print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
        await asyncio.Event().wait()

    try:
        import uvloop

        uvloop.run(run())
    except ImportError:
        asyncio.run(run())


if __name__ == "__main__":
    main()
