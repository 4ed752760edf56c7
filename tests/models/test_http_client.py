"""The OpenAI backend's own HTTP/1.1 client: reply framing, keep-alive, dropped connections and timeouts.

The replies come from a real loopback socket server that writes scripted bytes (``RawServer``), so
framings the stand-in server never uses (chunked, close-delimited, gzip, 100 Continue) are covered too.
"""
from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import socket
import ssl
import subprocess
import threading
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.models.base import GenerationParams
from promptweave.models.openai_compat import (
    OpenAICompatModel,
    RetriesExhaustedError,
    TransportError,
    _Conn,
    _Reply,
)
from promptweave.models.reply_limits import ReplyLimits

CHAT = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}


def chat_body(text: str) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}).encode()


def with_length(body: bytes, extra: str = "") -> bytes:
    return (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def chunked(body: bytes, sizes: list[int], trailer: str = "") -> bytes:
    out, pos = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"], 0
    for n in sizes + [len(body)]:
        piece = body[pos: pos + n]
        if not piece:
            continue
        out.append(b"%x;ext=1\r\n%b\r\n" % (len(piece), piece))
        pos += len(piece)
    out.append(f"0\r\n{trailer}\r\n".encode())
    return b"".join(out)


class RawServer:
    """A loopback server answering request number ``n`` (from 0) with ``script(n)``: a list of actions,
    each ``bytes`` (written), ``"close"`` (connection closed), ``("sleep", s)`` or ``"hang"`` (no reply)."""

    def __init__(self, script: Callable[[int], list], ssl_context: ssl.SSLContext | None = None) -> None:
        self.script = script
        self.ssl_context = ssl_context
        self.requests = 0
        self.connections = 0
        self._ready = threading.Event()

    def __enter__(self) -> "RawServer":
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        self._writers: set[asyncio.StreamWriter] = set()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.ssl_context)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            for w in list(self._writers):
                w.close()
            await asyncio.sleep(0.01)  # let the closed transports finish closing

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)  # a GET has no body
                await reader.readexactly(length)
                n, self.requests = self.requests, self.requests + 1
                for action in self.script(n):
                    if action == "close":
                        writer.close()
                        return
                    if action == "hang":
                        await self._stop.wait()
                        return
                    if isinstance(action, tuple):
                        await asyncio.sleep(action[1])
                        continue
                    writer.write(action)
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def model(url: str, **kw) -> OpenAICompatModel:
    kw.setdefault("backoff_base", 0.0)
    kw.setdefault("timeout", 5.0)
    return OpenAICompatModel(url, "m", **kw)


def ask(m: OpenAICompatModel, n: int = 1) -> list[str]:
    return m.chat([[{"role": "user", "content": f"q{i}"}] for i in range(n)], GenerationParams())


def test_keep_alive_reuses_one_connection() -> None:
    with RawServer(lambda n: [with_length(chat_body(f"a{n}"))]) as srv:
        assert ask(model(srv.url, concurrency=1), 5) == [f"a{i}" for i in range(5)]
        assert srv.connections == 1


def test_chunked_reply_with_extensions_and_trailer() -> None:
    body = chat_body("chunked answer")
    with RawServer(lambda n: [chunked(body, [3, 10, 1], trailer="X-Trailer: 1\r\n")]) as srv:
        assert ask(model(srv.url, concurrency=1), 3) == ["chunked answer"] * 3
        assert srv.connections == 1


def test_close_delimited_http10_reply_opens_a_new_connection_each_time() -> None:
    body = chat_body("old server")
    with RawServer(lambda n: [b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + body, "close"]) as srv:
        m = model(srv.url, concurrency=1)
        assert ask(m, 3) == ["old server"] * 3
        assert srv.connections == 3 and m.stats.retries == 0


def test_a_reply_saying_connection_close_is_not_reused() -> None:
    # the server leaves the socket open after saying Connection: close: the client must still not reuse it
    reply = [with_length(chat_body("a"), "Connection: close\r\n")]
    with RawServer(lambda n: reply) as srv:
        m = model(srv.url, concurrency=1)
        assert ask(m, 3) == ["a"] * 3
        assert srv.connections == 3 and m.stats.retries == 0


def test_a_connection_the_server_closed_while_idle_is_replaced_without_a_lost_request() -> None:
    # reply 0 is a 503 asking for a retry in 0.3 s, after which the server closes the connection (as an idle
    # keep-alive timeout would): the retry must go out on a new connection, not be lost on the closed one
    def script(n: int) -> list:
        if n == 0:
            busy = json.dumps({"error": {"message": "busy"}}).encode()
            return [with_length(busy, "Retry-After: 0.3\r\n").replace(b"200 OK", b"503 Busy"), "close"]
        return [with_length(chat_body("b"))]

    with RawServer(script) as srv:
        m = model(srv.url, concurrency=1, max_retries=1)
        assert ask(m) == ["b"]
        assert m.stats.retries == 1 and m.stats.retry_delays == [0.3]
        assert srv.requests == 2 and srv.connections == 2


def test_gzip_and_100_continue_are_understood() -> None:
    body = gzip.compress(chat_body("zipped"))
    reply = b"HTTP/1.1 100 Continue\r\n\r\n" + with_length(body, "Content-Encoding: gzip\r\n")
    with RawServer(lambda n: [reply]) as srv:
        assert ask(model(srv.url)) == ["zipped"]


def test_reply_stalled_mid_body_times_out_and_is_retried() -> None:
    full = with_length(chat_body("late"))
    with RawServer(lambda n: [full[:40], "hang"] if n == 0 else [full]) as srv:
        # the stall lasts until the server stops, so only the stalled attempt can time out, however slow the machine
        m = model(srv.url, timeout=3.0, max_retries=2)
        assert ask(m) == ["late"]
        assert m.stats.retries == 1 and srv.requests == 2


def test_truncated_and_garbled_replies_are_transient() -> None:
    full = with_length(chat_body("ok"))
    script = {0: [full[:30], "close"], 1: [b"SPDY/9 what\r\n\r\n"], 2: ["close"]}
    with RawServer(lambda n: script.get(n, [full])) as srv:
        m = model(srv.url, concurrency=1, max_retries=4)
        assert ask(m) == ["ok"]
        assert m.stats.retries == 3


def test_every_attempt_failing_names_the_last_transport_error() -> None:
    with RawServer(lambda n: [b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "close"]) as srv:
        with pytest.raises(RetriesExhaustedError, match="after 3 attempts.*ReadError") as ei:
            ask(model(srv.url, max_retries=2))
        assert ei.value.kind == "connection"


def test_refused_connection_is_retried_then_reported() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RetriesExhaustedError, match="ConnectError: could not connect to 127.0.0.1") as ei:
        ask(model(f"http://127.0.0.1:{port}/v1", max_retries=1))
    assert ei.value.kind == "connection" and ei.value.attempts == 2


# -- the reply parser, fed byte slices directly (no socket) ----------------------------------------------


class _Sink:
    def __init__(self) -> None:
        self.closed = False
        self.sent = b""

    def write(self, data: bytes) -> None:
        self.sent += data

    def close(self) -> None:
        self.closed = True


def _feed(raw: bytes, cuts: list[int]) -> tuple[_Reply | BaseException, _Conn]:
    loop = asyncio.new_event_loop()
    try:
        conn = _Conn(loop, ReplyLimits(timeout=60.0))
        conn.connection_made(_Sink())  # type: ignore[arg-type]
        fut = conn.request(b"POST / HTTP/1.1\r\n\r\n")
        pos = 0
        for cut in sorted({min(c, len(raw)) for c in cuts}) + [len(raw)]:
            if cut > pos:
                conn.data_received(raw[pos:cut])
                pos = cut
        if not fut.done():
            conn.connection_lost(None)
        return (fut.exception() or fut.result()), conn
    finally:
        loop.close()


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=300), sizes=st.lists(st.integers(1, 50), max_size=8),
       cuts=st.lists(st.integers(0, 600), max_size=12), use_chunks=st.booleans())
def test_any_split_of_a_reply_parses_to_the_same_body(body: bytes, sizes: list[int], cuts: list[int],
                                                      use_chunks: bool) -> None:
    raw = chunked(body, sizes) if use_chunks else with_length(body, "X-A: 1\r\nX-A: 2\r\n")
    reply, conn = _feed(raw, cuts)
    assert isinstance(reply, _Reply)
    assert reply.status_code == 200 and reply.content == body
    assert not conn.closed  # framed replies keep the connection
    if not use_chunks:
        assert reply.headers["x-a"] == "1, 2"


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=200), cuts=st.lists(st.integers(0, 200), max_size=6))
def test_garbage_never_escapes_as_anything_but_a_transport_error(raw: bytes, cuts: list[int]) -> None:
    result, conn = _feed(raw, cuts)
    if isinstance(result, BaseException):
        assert isinstance(result, TransportError)
        assert conn.closed
    else:
        assert isinstance(result, _Reply)


def _self_signed(tmp_path) -> tuple[str, str]:
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a test certificate")
def test_https_verifies_the_certificate_and_keeps_the_connection(tmp_path, monkeypatch) -> None:
    cert, key = _self_signed(tmp_path)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    with RawServer(lambda n: [with_length(chat_body(f"tls{n}"))], ssl_context=server_ctx) as srv:
        url = srv.url.replace("http://", "https://")
        with pytest.raises(RetriesExhaustedError, match="ConnectError.*CERTIFICATE_VERIFY_FAILED"):
            ask(model(url, max_retries=0))  # an unknown certificate is refused
        monkeypatch.setenv("SSL_CERT_FILE", cert)  # trusted from here on
        assert ask(model(url, concurrency=1), 3) == ["tls0", "tls1", "tls2"]
        assert srv.connections == 1  # one kept-alive connection (the refused handshake never got this far)
