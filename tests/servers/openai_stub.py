"""A loopback stand-in for a remote OpenAI-protocol service (vLLM, llama.cpp server, ...).

It is a real HTTP/1.1 server on 127.0.0.1 (asyncio, keep-alive) that speaks
``/v1/chat/completions``, ``/v1/completions`` and ``/v1/models``, whole or, for a body with ``"stream": true``,
as a server-sent event stream the way vLLM sends one (chunked, one ``data:`` event per token, a usage event when
``stream_options.include_usage`` asks for it, then ``data: [DONE]``). Tests use it in
place of a remote service: answers are scripted, faults can be injected (429 with
``Retry-After``, 500, slow replies, dropped connections, a permanent 401), requests
past a point can be held unanswered (to kill a client mid-run), and every request is
counted, both as received and as answered, per request key.

Use from any test folder::

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
    from openai_stub import StubServer, Fault, transient_faults  # noqa: E402

or run standalone: ``python tests/servers/openai_stub.py --port 8001 --latency 0.05``.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class Fault:
    """One injected fault: ``kind`` is ``status`` (with ``code``), ``drop``, ``slow`` or ``malformed``
    (HTTP 200 with ``body`` as the raw reply: not JSON, JSON without ``choices``, ...)."""

    kind: str
    code: int = 500
    retry_after: Optional[float] = None
    delay: float = 0.0
    message: str = "injected fault"
    body: str = ""


MALFORMED_200 = (Fault("malformed", body="<html>502 Bad Gateway</html>"),
                 Fault("malformed", body='{"id": "x", "object": "chat.completion"}'),
                 Fault("malformed", body='{"choices": [{"index": 0, "finish_reason": "stop"}]}'),
                 Fault("malformed", body='{"choices": []}'),
                 Fault("malformed", body='{"choices": [{"message": {"role": "assistant", "content": '))
"""200 replies a flaky proxy or overloaded server gives: not JSON, no ``choices``, no message, truncated."""

EVERY_FAULT = (Fault("status", 429, retry_after=0.0), Fault("status", 500), Fault("drop"), Fault("status", 503),
               Fault("status", 502), Fault("slow", delay=3.0)) + MALFORMED_200
"""Every transient fault kind; ``slow`` outlasts a client timeout below 3 s."""


FaultPlan = Callable[[str, int, dict], Optional[Fault]]
"""``plan(key, attempt, body) -> Fault | None``; ``attempt`` counts from 1 per request key."""


def request_key(path: str, body: dict) -> str:
    """The identity of a request: endpoint + model + prompt/messages + decoding fields."""
    keep = {k: body.get(k) for k in ("model", "prompt", "messages", "max_tokens", "temperature", "stop",
                                     "echo", "logprobs", "seed", "top_p")}
    if body.get("tools"):
        keep["tools"] = body["tools"]
    text = json.dumps([path, keep], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def transient_faults(rate: float, times: int = 2, seed: int = 0,
                     kinds: tuple[Fault, ...] = (Fault("status", 429, retry_after=0.0), Fault("status", 500),
                                                 Fault("drop"), Fault("status", 503))) -> FaultPlan:
    """A deterministic plan: a ``rate`` share of request keys fail their first ``times`` attempts."""

    def plan(key: str, attempt: int, body: dict) -> Optional[Fault]:
        pick = int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        if pick < rate and attempt <= times:
            return kinds[(attempt - 1 + int(pick * 1000)) % len(kinds)]
        return None

    return plan


def default_answer(body: dict) -> str:
    """A deterministic answer derived from the prompt, shaped like a multiple-choice reply."""
    src = json.dumps(body.get("messages") or body.get("prompt"), sort_keys=True, ensure_ascii=False)
    h = int(hashlib.sha256(src.encode("utf-8", "surrogatepass")).hexdigest()[:8], 16)
    return f"The answer is {'ABCD'[h % 4]}. Because {h % 97} is the reason."


_TOKEN = re.compile(r"\s*\S+|\s+")


def default_tool_calls(body: dict) -> list:
    """One call of the request's first tool, each required parameter set to a value of its type."""
    fn = body["tools"][0].get("function", {})
    props = (fn.get("parameters") or {}).get("properties") or {}
    sample = {"integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}
    args = {k: sample.get((props.get(k) or {}).get("type"), "x")
            for k in (fn.get("parameters") or {}).get("required") or []}
    return [(fn.get("name", ""), args)]


def fake_token_logprob(token: str) -> float:
    """A deterministic per-token log-probability for echo scoring."""
    h = int(hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:6], 16)
    return -0.05 - (h % 400) / 100.0


@dataclass
class StubServer:
    """The stand-in server. ``start()`` / ``stop()`` or use as a context manager."""

    latency: float = 0.0
    answer: Callable[[dict], str] = default_answer
    faults: Optional[FaultPlan] = None
    supports_echo: bool = True
    hold_after: Optional[int] = None
    host: str = "127.0.0.1"
    port: int = 0
    received: Counter = field(default_factory=Counter)
    answered: Counter = field(default_factory=Counter)
    log: list = field(default_factory=list)
    # a request with ``tools`` is answered with ``tool_calls(body)``: a list of (name, arguments dict) calls
    tool_calls: Optional[Callable[[dict], list]] = None
    # a chat reply's ``reasoning_content`` (a reasoning model's thinking, sent beside the answer), when set
    reasoning: Optional[Callable[[dict], str]] = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._ready = threading.Event()
        self.held = threading.Event()  # set when the first request past ``hold_after`` arrives
        self._n_received = 0
        self.in_flight = 0
        self.peak_in_flight = 0

    # -- lifecycle -------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def total_received(self) -> int:
        return sum(self.received.values())

    @property
    def total_answered(self) -> int:
        return sum(self.answered.values())

    def start(self) -> "StubServer":
        self._thread = threading.Thread(target=self._serve_thread, daemon=True)
        self._thread.start()
        self._ready.wait()
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop_event.set)
            self._thread.join(timeout=10)

    def __enter__(self) -> "StubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _serve_thread(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        self._loop.close()

    def release_hold(self) -> None:
        """Serve requests normally again; requests held so far are dropped unanswered (their client is gone)."""
        self.hold_after = None
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._released.set)

    async def _main(self) -> None:
        self._stop_event = asyncio.Event()
        self._released = asyncio.Event()
        server = await asyncio.start_server(self._handle, self.host, self.port, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._handlers: set = set()
        self._transports: weakref.WeakSet = weakref.WeakSet()
        async with server:
            await self._stop_event.wait()
            server.close()
            for t in list(self._handlers):
                t.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
            # a transport still flushing a reply to a client that is gone would outlive the loop unclosed
            for t in list(self._transports):
                t.abort()
            await asyncio.sleep(0)  # let the closed transports finish closing

    # -- HTTP --------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._handlers.add(task)
        self._transports.add(writer.transport)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body_bytes = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                self.in_flight += 1  # requests being handled at once, for concurrency-limit tests
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
                try:
                    keep = await self._respond(method, path, headers, body_bytes, writer)
                finally:
                    self.in_flight -= 1
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, asyncio.CancelledError):
            pass
        finally:
            self._handlers.discard(task)
            try:
                writer.close()
            except Exception:
                pass

    async def _send(self, writer: asyncio.StreamWriter, status: int, payload: dict,
                    extra_headers: dict | None = None) -> None:
        await self._send_raw(writer, status, json.dumps(payload).encode(), extra_headers)

    async def _send_raw(self, writer: asyncio.StreamWriter, status: int, data: bytes,
                        extra_headers: dict | None = None) -> None:
        reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
                  429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}.get(status, "X")
        head = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json",
                f"Content-Length: {len(data)}", "Connection: keep-alive"]
        for k, v in (extra_headers or {}).items():
            head.append(f"{k}: {v}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        await writer.drain()

    async def _respond(self, method: str, path: str, headers: dict, raw: bytes,
                       writer: asyncio.StreamWriter) -> bool:
        if method == "GET" and path.rstrip("/").endswith("/models"):
            await self._send(writer, 200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
            return True
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            await self._send(writer, 400, {"error": {"message": "bad json"}})
            return True
        key = request_key(path, body)
        with self._lock:
            self.received[key] += 1
            attempt = self.received[key]
            self._n_received += 1
            n = self._n_received
            self.log.append({"key": key, "path": path, "attempt": attempt, "body": body})
        if self.hold_after is not None and n > self.hold_after:
            self.held.set()
            # never answered: the client is killed while waiting (release_hold drops these and serves the rest)
            await asyncio.wait([asyncio.ensure_future(self._stop_event.wait()),
                                asyncio.ensure_future(self._released.wait())], return_when=asyncio.FIRST_COMPLETED)
            return False
        fault = self.faults(key, attempt, body) if self.faults else None
        if fault is not None:
            if fault.kind == "drop":
                return False
            if fault.kind == "malformed":
                await self._send_raw(writer, 200, fault.body.encode())
                return True
            if fault.kind == "slow":
                await asyncio.sleep(fault.delay)
            elif fault.kind == "status":
                extra = {} if fault.retry_after is None else {"Retry-After": f"{fault.retry_after:g}"}
                await self._send(writer, fault.code, {"error": {"message": fault.message, "code": fault.code}},
                                 extra)
                return True
        if self.latency:
            await asyncio.sleep(self.latency)
        if path.endswith("/chat/completions"):
            payload = self._chat(body)
        elif path.endswith("/completions"):
            payload = self._completion(body)
            if payload is None:
                await self._send(writer, 400, {"error": {"message": "echo with logprobs is not supported"}})
                return True
        else:
            await self._send(writer, 404, {"error": {"message": f"no route {path}"}})
            return True
        with self._lock:
            self.answered[key] += 1
        if body.get("stream") is True:
            await self._send_events(writer, self._events(payload, body))
        else:
            await self._send(writer, 200, payload)
        return True

    async def _send_events(self, writer: asyncio.StreamWriter, events: list[dict]) -> None:
        """A 200 event stream, one chunk of the chunked body per event (and the head in its own write), so a
        client must put events back together across reads."""
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                     b"Connection: keep-alive\r\n\r\n")
        await writer.drain()
        for data in [json.dumps(e, ensure_ascii=False) for e in events] + ["[DONE]"]:
            chunk = f"data: {data}\n\n".encode()
            writer.write(b"%x\r\n%b\r\n" % (len(chunk), chunk))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    @staticmethod
    def _events(payload: dict, body: dict) -> list[dict]:
        """A whole reply as vLLM streams it: a role event (chat), one event per token, a finish event, and a
        usage event (empty ``choices``) when ``stream_options.include_usage`` is true."""
        chat = payload["object"] == "chat.completion"
        head = {"id": payload["id"], "object": "chat.completion.chunk" if chat else "text_completion",
                "model": payload.get("model")}
        events = []
        choice = payload["choices"][0]
        if chat:
            msg = choice["message"]
            events.append(head | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                               "finish_reason": None}]})
            for tok in _TOKEN.findall(msg.get("reasoning_content") or ""):
                events.append(head | {"choices": [{"index": 0, "delta": {"reasoning_content": tok},
                                                   "finish_reason": None}]})
            for tok in _TOKEN.findall(msg.get("content") or ""):
                events.append(head | {"choices": [{"index": 0, "delta": {"content": tok}, "finish_reason": None}]})
            events.append(head | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
        else:
            for tok in _TOKEN.findall(choice.get("text") or ""):
                events.append(head | {"choices": [{"index": 0, "text": tok, "logprobs": None,
                                                   "finish_reason": None}]})
            events.append(head | {"choices": [{"index": 0, "text": "", "logprobs": None,
                                               "finish_reason": choice["finish_reason"]}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            n = sum(1 for e in events if e["choices"])
            events.append(head | {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": n,
                                                          "total_tokens": n + 1}})
        return events

    def _cut(self, text: str, body: dict) -> str:
        stop = body.get("stop") or []
        for s in [stop] if isinstance(stop, str) else stop:
            if s and s in text:
                text = text[: text.index(s)]
        return text

    def _chat(self, body: dict) -> dict:
        if body.get("tools"):
            calls = (self.tool_calls or default_tool_calls)(body)
            return {"id": "chatcmpl-stub", "object": "chat.completion", "model": body.get("model"),
                    "choices": [{"index": 0, "message": {
                        "role": "assistant", "content": None,
                        "tool_calls": [{"id": f"call_{n}", "type": "function",
                                        "function": {"name": name, "arguments": json.dumps(args)}}
                                       for n, (name, args) in enumerate(calls)]},
                        "finish_reason": "tool_calls"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        text = self._cut(self.answer(body), body)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if self.reasoning is not None:
            message["reasoning_content"] = self.reasoning(body)
        return {"id": "chatcmpl-stub", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    def _completion(self, body: dict) -> Optional[dict]:
        prompt = body.get("prompt", "")
        if isinstance(prompt, list):
            prompt = prompt[0] if prompt else ""
        gen = self._cut(self.answer(body), body)
        if body.get("echo"):
            if not self.supports_echo:
                return None
            first = _TOKEN.findall(gen)[:1] if body.get("max_tokens") else []
            gen = first[0] if first else ""  # max_tokens is at most 1 when scoring
            # like a real server: the prompt's tokens, then the generated ones
            toks = _TOKEN.findall(prompt) + ([gen] if gen else [])
            text = prompt + gen
        else:
            toks = _TOKEN.findall(gen)
            text = gen
        choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}
        if body.get("logprobs") is not None:
            offsets, pos = [], 0
            for t in toks:
                offsets.append(pos)
                pos += len(t)
            lps: list = [fake_token_logprob(t) for t in toks]
            if body.get("echo") and lps:
                lps[0] = None  # the first prompt token has no conditional probability
            choice["logprobs"] = {"tokens": toks, "token_logprobs": lps, "text_offset": offsets,
                                  "top_logprobs": None}
        return {"id": "cmpl-stub", "object": "text_completion", "model": body.get("model"), "choices": [choice]}


def scripted_agent(script: dict, fallback: str = "Final Answer: (no scripted reply)") -> Callable[[dict], str]:
    """An ``answer`` for code-agent tests (added by the agent helper): the reply to a chat request is
    ``script[last user message][n]``, ``n`` being the number of assistant messages after that user message (the
    agent's earlier attempts at this turn). Stateless, so a rerun through the response cache gets the same replies.
    """

    def answer(body: dict) -> str:
        msgs = body.get("messages") or []
        last = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=-1)
        if last < 0:
            return fallback
        attempt = sum(1 for m in msgs[last + 1:] if m.get("role") == "assistant")
        replies = script.get(msgs[last].get("content"), [])
        return replies[attempt] if attempt < len(replies) else fallback

    return answer


def _unit(text: str) -> float:
    return int(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8], 16) / 0xFFFFFFFF


def format_sensitive(rows: list, *, question: str = "question", answer: str = "answer", options: str = "ABCD",
                     salt: str = "") -> Callable[[dict], str]:
    """A model whose accuracy is set by the prompt's *format* alone (a stand-in for FormatSpread's finding).

    It finds the row whose ``question`` the prompt holds (``rows``: the dataset's rows, with the gold in
    ``answer``), cuts that row's values out of the prompt, and hashes what is left (the format: descriptors,
    separators, spacing, labels, cue, meta template) into an accuracy ``q`` between 0.05 and 0.95. A row is
    answered right when its own hash is below ``q``, else with the next letter. So the same format always
    gets the same rows right, a different format gets a different share right, and the row's values play
    no part. ``salt`` picks another such model.
    """
    by_q = sorted(((str(r[question]), r) for r in rows), key=lambda qr: -len(qr[0]))

    def reply(body: dict) -> str:
        text = json.dumps(body.get("messages") or body.get("prompt"), ensure_ascii=False)
        for q, row in by_q:
            if json.dumps(q, ensure_ascii=False)[1:-1] in text:
                break
        else:
            return default_answer(body)
        skeleton = text
        values = sorted({json.dumps(str(v), ensure_ascii=False)[1:-1] for v in row.values()}, key=len, reverse=True)
        for v in values:
            if len(v) > 1:
                skeleton = skeleton.replace(v, "")
        level = 0.05 + 0.9 * _unit(f"{salt}|format|{skeleton}")
        gold = str(row[answer])
        if _unit(f"{salt}|row|{q}") < level:
            return f"The answer is {gold}."
        wrong = options[(options.index(gold) + 1) % len(options)] if gold in options else options[0]
        return f"The answer is {wrong}."

    return reply


def main() -> None:  # pragma: no cover - manual use
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8001)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop",
                    help="event loop of the standalone server (uvloop, as vLLM's server runs, when installed)")
    ap.add_argument("--format-sensitive", metavar="ROWS.jsonl",
                    help="answer as format_sensitive() does for these rows (question / answer columns)")
    args = ap.parse_args()
    if args.loop == "uvloop":
        try:
            import uvloop
            asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        except ImportError:
            pass
    kw = {}
    if args.format_sensitive:
        with open(args.format_sensitive, encoding="utf-8") as f:
            kw["answer"] = format_sensitive([json.loads(line) for line in f if line.strip()])
    srv = StubServer(latency=args.latency, port=args.port, **kw).start()
    print(f"stand-in OpenAI server on {srv.url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":  # pragma: no cover
    main()


try:  # a pytest fixture for tests that want a default stand-in server
    import pytest

    @pytest.fixture
    def stub_server():
        """A started :class:`StubServer` with default answers; stopped after the test."""
        with StubServer() as srv:
            yield srv
except ImportError:  # pragma: no cover
    pass
