"""A backend for any server speaking the OpenAI HTTP protocol (vLLM, llama.cpp server, OpenAI itself).

Requests are sent asynchronously over keep-alive HTTP/1.1 connections driven by asyncio
protocols (``_HTTP`` below: httpx/httpcore cost ~0.8 ms of client CPU per request in their
anyio/h11 layers, which capped one process near the 64-concurrent bound; this client costs
a fifth of that or less) under a concurrency limit and an optional requests-per-minute
limit. 429 / 5xx / timeouts / dropped connections and malformed 200 replies (a body
that is not JSON, or JSON without the expected ``choices``) are retried with exponential
backoff and full jitter, honouring ``Retry-After``, up to ``max_retries`` times; any
other 4xx is permanent.

A permanent error on one request (400, 413, 422: the request itself is at fault) or a
request that exhausted its retries fails that item only when the caller passes
``on_error``; an error that concerns every request (401, 403, 404: key, permissions,
URL or model name) stops the batch.
"""
from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

from promptweave.errors import EndpointDownError, ModelError
from promptweave.models.arrivals import ArrivalLog
from promptweave.models.base import Capabilities, GenerationParams, Message
from promptweave.models.rate_limit import Clock, RateLimiter, SystemClock
from promptweave.models.reply_limits import ReplyLimits, ReplyTooLarge, inflate, loads


class ModelRequestError(ModelError):
    """The server refused a request permanently (bad key, unknown model, unsupported feature)."""

    code = "PW410"

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1, whole_model: bool = False,
                 **kw: Any) -> None:
        self.status = status
        self.attempts = attempts
        self.whole_model = whole_model
        super().__init__(message, **kw)

    @property
    def kind(self) -> str:
        return f"http_{self.status}" if self.status else "refused"

    @property
    def row_level(self) -> bool:
        """True when only this request is at fault (the others may well succeed)."""
        return self.status in ROW_LEVEL_STATUS and not self.whole_model


class RetriesExhaustedError(ModelError):
    """A request kept failing transiently past the retry budget."""

    code = "PW420"

    def __init__(self, message: str, *, kind: str = "transient", attempts: int = 1, **kw: Any) -> None:
        self.kind = kind
        self.attempts = attempts
        super().__init__(message, **kw)

    row_level = True


class _Malformed(Exception):
    """A 200 reply without the fields the request kind needs: retried like a transient fault."""


ROW_LEVEL_STATUS = frozenset({400, 413, 422})

UNREACHABLE_AFTER = 4
"""Connection attempts failing in a row (refused, unreachable, timed out while connecting) after which a model's
server is taken to be down: the model's remaining requests fail at once instead of each backing off."""

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass
class RequestStats:
    """Counters a caller can read after a batch: what was sent and how often it was retried."""

    sent: int = 0
    ok: int = 0
    retries: int = 0
    retry_delays: list[float] = field(default_factory=list)


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _strip_endpoint(base_url: str) -> str:
    url = base_url.rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    return url


class OpenAICompatModel:
    """A chat / completion / scoring model behind an OpenAI-compatible HTTP endpoint.

    ``base_url`` is the API root (``http://127.0.0.1:8000/v1``); a full
    ``.../chat/completions`` URL is accepted too. Backoff is ``backoff_base * 2**attempt``
    seconds with full jitter, capped at ``backoff_max``; set ``backoff_base=0`` in tests.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        name: str | None = None,
        concurrency: int = 16,
        rpm: float | None = None,
        max_retries: int = 6,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        retry_after_max: float = 300.0,
        timeout: float = 120.0,
        deadline: float | None = None,
        max_reply_bytes: int | None = None,
        max_event_bytes: int | None = None,
        max_json_depth: int | None = None,
        extra_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        revision: str | None = None,
        endpoint: str = "chat",
        request_rate: float | None = None,
        traffic: dict[str, Any] | None = None,
        clock: Clock | None = None,
    ) -> None:
        if endpoint not in ("chat", "completions"):
            raise ModelError("endpoint must be 'chat' or 'completions'", field="endpoint", value=endpoint)
        self.endpoint = endpoint
        # an HTTP server: sent concurrently, answers stored as they arrive; a chat-only server takes text prompts
        # as one user message
        self.capabilities = Capabilities(remote=True, result_bursts=True, tool_calls=True,
                                         chat_endpoint=endpoint == "chat")
        if concurrency < 1:
            raise ModelError("concurrency must be at least 1", field="concurrency", value=concurrency)
        self.base_url = _strip_endpoint(base_url)
        self.model = model
        self.name = name or model
        self.api_key = api_key
        self.concurrency = concurrency
        self.rpm = rpm
        # AISBench's request_rate / traffic_cfg: each batch's request starts on a schedule (models/pacing.py)
        self.request_rate = request_rate
        self.traffic = dict(traffic or {})
        self._pacer: Any = None
        self.pacing_clock: tuple[Callable[[], float], Callable[[float], Any]] = (time.monotonic, asyncio.sleep)
        self.clock: Clock = clock or SystemClock()  # what rpm pacing waits on (a test passes a virtual one)
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.retry_after_max = retry_after_max
        self.timeout = timeout
        given = {k: v for k, v in (("max_reply_bytes", max_reply_bytes), ("max_event_bytes", max_event_bytes),
                                   ("max_json_depth", max_json_depth)) if v is not None}
        self.limits = ReplyLimits(timeout=timeout, deadline=deadline, **given)
        self.extra_body = dict(extra_body or {})
        self.headers = dict(headers or {})
        self.revision = revision
        self.stats = RequestStats()
        self._rng = random.Random()
        self._unreachable = 0  # connection attempts that failed in a row, across workers and batches

    # -- capabilities ------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        """What makes this model's answers distinct (the response cache keys on it)."""
        return {"backend": "openai", "url": self.base_url, "model": self.model, "revision": self.revision,
                "endpoint": self.endpoint, "extra_body": self.extra_body}

    def max_connections(self) -> int:
        return self.concurrency

    def should_retry(self, exc: BaseException) -> bool:
        return isinstance(exc, _TRANSIENT)

    # -- request building ----------------------------------------------------
    def _decoding(self, params: GenerationParams) -> dict[str, Any]:
        body: dict[str, Any] = {"max_tokens": params.max_out_len, "temperature": params.temperature}
        if params.top_p is not None:
            body["top_p"] = params.top_p
        if params.stop:
            body["stop"] = list(params.stop)
        if params.seed is not None:
            body["seed"] = params.seed
        body.update(params.extra)
        return body

    def chat_request(self, messages: Sequence[Message], params: GenerationParams) -> tuple[str, dict]:
        msgs = [{"role": "user", "content": messages}] if isinstance(messages, str) else [
            openai_message(m) for m in messages]
        return "/chat/completions", {"model": self.model, "messages": msgs, **self._decoding(params),
                                     **self.extra_body}

    def completion_request(self, prompt: str, params: GenerationParams) -> tuple[str, dict]:
        return "/completions", {"model": self.model, "prompt": prompt, **self._decoding(params), **self.extra_body}

    def score_request(self, text: str) -> tuple[str, dict]:
        # max_tokens=1 rather than 0: several servers reject 0; the one generated token is dropped
        return "/completions", {"model": self.model, "prompt": text, "max_tokens": 1, "echo": True,
                                "logprobs": 1, "temperature": 0.0, **self.extra_body}

    def stream_request(self, item: Any, params: GenerationParams) -> tuple[str, dict]:
        """The streamed request for ``item`` (a message list, or a text prompt), as a serving benchmark sends
        it: this model's own body with ``stream`` on and the usage asked for in the last event."""
        if isinstance(item, str) and self.endpoint == "completions":
            path, body = self.completion_request(item, params)
        else:
            path, body = self.chat_request(item, params)
        return path, {**body, "stream": True, "stream_options": {"include_usage": True}}

    def served_model(self) -> str:
        """The model name requests carry (a subclass may ask the server for it)."""
        return self.model

    def http_client(self, connections: int) -> "_HTTP":
        """This model's HTTP client (headers, key, reply limits) with room for ``connections`` connections;
        its ``post(url, body, log)`` fills an :class:`~promptweave.models.arrivals.ArrivalLog`. Close it with
        ``await client.aclose()``."""
        return self._client(connections)

    def decode_reply(self, resp: "_Reply", path: str, body: dict) -> Any:
        """The value of a 200 reply to ``body`` (its JSON; a subclass may read another framing, e.g. an event
        stream). ``ValueError`` marks it malformed (retried); ``ReplyTooLarge`` fails the request."""
        return resp.json()

    # -- transport -----------------------------------------------------------
    def _client(self, connections: int) -> "_HTTP":
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self.headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return _HTTP(connections, headers, self.limits)

    def _backoff(self, attempt: int) -> float:
        cap = min(self.backoff_max, self.backoff_base * (2 ** attempt))
        return self._rng.uniform(0, cap)

    async def _post(self, client: "_HTTP", path: str, body: dict,
                    parse: Callable[[Any], Any] | None = None) -> Any:
        """POST with retries; ``parse(data)`` turns the JSON reply into the result (``_Malformed`` = retry)."""
        url = self.base_url + path
        last: str = ""
        kind = "transient"
        for attempt in range(self.max_retries + 1):
            if attempt == 0 and self._pacer is not None:  # a request's start is paced, not its retries
                await self._pacer.acquire()
            await self._limiter.acquire()
            self.stats.sent += 1
            delay = self._backoff(attempt)
            try:
                resp = await client.post(url, body)
            except ReplyOversize as exc:  # the same request would get the same flood: not retried
                raise RetriesExhaustedError(f"{url}: {exc}; the request is not retried", kind="too_large",
                                            attempts=attempt + 1, field="model", value=self.model) from None
            except (ConnectError, ConnectTimeout) as exc:
                self._unreachable += 1
                last = f"{type(exc).__name__}: {exc}"
                kind = exc.kind
                if self._unreachable >= UNREACHABLE_AFTER:
                    raise EndpointDownError(
                        f"cannot reach {url}: {exc} ({self._unreachable} connection attempts in a row failed); the "
                        "model's remaining requests are not sent: check that the server is running and that "
                        "base_url / host_ip and port are right, then rerun the same command",
                        field="model", value=self.model) from None
            except _TRANSIENT as exc:
                self._unreachable = 0
                last = f"{type(exc).__name__}: {exc}"
                kind = exc.kind
            else:
                self._unreachable = 0
                if resp.status_code == 200:
                    try:
                        data = self.decode_reply(resp, path, body)
                        value = parse(data) if parse is not None else data
                    except ReplyTooLarge as exc:
                        raise RetriesExhaustedError(f"{url}: {exc}; the request is not retried", kind="too_large",
                                                    attempts=attempt + 1, field="model", value=self.model) from None
                    except (ValueError, _Malformed) as exc:
                        # a proxy's HTML error page, a truncated body, a reply without choices: retry
                        last = (f"HTTP 200 with a body that is not JSON: {resp.text[:120]!r}"
                                if isinstance(exc, ValueError) else f"HTTP 200 but {exc}")
                        kind = "malformed"
                    else:
                        self.stats.ok += 1
                        return value
                else:
                    detail = _error_text(resp)
                    if resp.status_code not in RETRYABLE_STATUS:
                        hint = {401: " (check the API key)", 403: " (check the API key's permissions)",
                                404: " (check base_url and the model name)"}.get(resp.status_code, "")
                        raise ModelRequestError(
                            f"{url} refused the request with HTTP {resp.status_code}{hint}: {detail}",
                            status=resp.status_code, attempts=attempt + 1, field="model", value=self.model)
                    last = f"HTTP {resp.status_code}: {detail}"
                    kind = f"http_{resp.status_code}"
                    after = _parse_retry_after(resp.headers.get("retry-after"))
                    if after is not None:
                        delay = min(after, self.retry_after_max)
            if attempt == self.max_retries:
                break
            self.stats.retries += 1
            self.stats.retry_delays.append(delay)
            if delay > 0:
                await asyncio.sleep(delay)
        raise RetriesExhaustedError(
            f"{url} kept failing after {self.max_retries + 1} attempts; last error: {last}",
            kind=kind, attempts=self.max_retries + 1, field="model", value=self.model)

    async def _call(self, client: "_HTTP", kind: str, item: Any, params: GenerationParams) -> Any:
        if kind == "chat":
            path, body = self.chat_request(item, params)
            return await self._post(client, path, body, _chat_content)
        if kind == "tool_chat":  # function calling (infer/function_call.py): the row's tools ride along
            messages, tools = item
            path, body = self.chat_request(messages, params)
            return await self._post(client, path, {**body, "tools": tools}, _chat_tool_reply)
        if kind == "complete":
            path, body = self.completion_request(item, params)
            return await self._post(client, path, body, _completion_text)
        if kind == "score":
            return await self._score(client, item)
        if kind == "loglikelihood":
            context, continuation = item
            lps, offsets = await self._score(client, context + continuation, with_offsets=True)
            # token i's log-prob is at lps[i-1]; sum the tokens that start inside the continuation
            return float(sum(lp for lp, off in zip(lps, offsets[1:]) if off >= len(context)))
        raise ValueError(kind)

    async def _score(self, client: "_HTTP", text: str, with_offsets: bool = False) -> Any:
        path, body = self.score_request(text)
        try:
            data = await self._post(client, path, body, _has_choices)
        except ModelRequestError as exc:
            if exc.status in (400, 404, 422, 501):
                raise ModelRequestError(
                    "this server does not score prompts (needs /v1/completions with echo=true and logprobs; "
                    "vLLM supports it, llama.cpp's server and chat-only APIs do not); use gen mode or a "
                    f"local model for PPL. Server said: {exc.message}", status=exc.status, whole_model=True,
                    field="model", value=self.model) from None
            raise
        try:
            lp = data["choices"][0]["logprobs"]
            tokens_lp = lp["token_logprobs"]
            offsets = lp.get("text_offset") or []
        except (KeyError, IndexError, TypeError):
            tokens_lp = None
        if not tokens_lp:
            raise ModelRequestError("this server ignored echo/logprobs, so it cannot score prompts (PPL/CLP); "
                                    "use gen mode or a local model", field="model", value=self.model)
        # keep the prompt's own tokens: drop what was generated after it (by text offset when given)
        if offsets and len(offsets) == len(tokens_lp):
            n = sum(1 for off in offsets if off < len(text))
        else:
            n = len(tokens_lp) - int(len(tokens_lp) > 1 and body["max_tokens"] > 0)
        tokens_lp, offsets = tokens_lp[:n], list(offsets)[:n]
        # the first token has no conditional probability; the rest are the per-token scores
        if any(x is None for x in tokens_lp[1:]):
            raise ModelRequestError("server returned a null log-probability inside the prompt", field="model",
                                    value=self.model)
        scores = [float(x) for x in tokens_lp[1:]]
        return (scores, offsets) if with_offsets else scores

    # -- batch driver ----------------------------------------------------------
    def run_batch(self, kind: str, items: Sequence[Any], params: GenerationParams | None = None,
                  on_result: Callable[[int, Any], None] | None = None,
                  on_error: Callable[[int, ModelError], None] | None = None,
                  on_results: Callable[[list[tuple[int, Any]]], None] | None = None) -> list[Any]:
        """Send ``items`` concurrently; call ``on_result(i, value)`` as each finishes.

        ``kind`` is ``chat`` / ``complete`` / ``score`` / ``loglikelihood``. With ``on_error``,
        an item whose request is at fault or ran out of retries is handed to
        ``on_error(i, exc)`` (its result stays None) and the others go on. An error that
        concerns every request (or any error without ``on_error``) cancels what is still
        pending and is raised after the finished results have been delivered, so nothing
        already answered is lost.

        ``on_results([(i, value), ...])`` is the batched form: the answers that arrived together
        (in one turn of the event loop) are handed over in one call, so a cache stores them in one
        transaction; as with ``on_result``, a worker sends its next request only after its answer
        was handed over.
        """
        params = params or GenerationParams()
        return _run_sync(self._run_batch(kind, list(items), params, on_result, on_error, on_results))

    async def _run_batch(self, kind: str, items: list, params: GenerationParams,
                         on_result: Callable[[int, Any], None] | None,
                         on_error: Callable[[int, ModelError], None] | None = None,
                         on_results: Callable[[list[tuple[int, Any]]], None] | None = None) -> list[Any]:
        self._limiter = RateLimiter(self.rpm, self.clock)
        self._pacer = None
        if self.request_rate or self.traffic.get("ramp_up_strategy"):
            from promptweave.models.pacing import RequestPacer, start_offsets

            clock, sleep = self.pacing_clock
            self._pacer = RequestPacer(start_offsets(len(items), float(self.request_rate or 0), self.traffic),
                                       clock=clock, sleep=sleep)
        results: list[Any] = [None] * len(items)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(len(items)):
            queue.put_nowait(i)
        n_workers = min(self.concurrency, max(len(items), 1))
        client = self._client(n_workers)
        loop = asyncio.get_running_loop()
        pending: list[tuple[int, Any]] = []
        flushed: list[asyncio.Future] = []  # the future the answers in ``pending`` wait on, once one is due

        failed: list[BaseException] = []

        def flush() -> None:
            batch, fut = pending[:], flushed.pop()
            pending.clear()
            if failed:
                # an earlier hand-over failed and the batch is stopping: answers that arrived since are not
                # handed to a store that just failed (they were never recorded, so a rerun asks again)
                if not fut.done():
                    fut.set_exception(failed[0])
                return
            try:
                on_results(batch)  # type: ignore[misc]
                if on_result is not None:
                    for i, value in batch:
                        on_result(i, value)
            except BaseException as exc:  # every worker of the batch raises it; the batch stops
                failed.append(exc)
                if not fut.done():
                    fut.set_exception(exc)
                    return
                raise
            # done already: a worker awaiting it was cancelled (the batch is being torn down), which
            # cancels the shared future; the answers were still handed over above
            if not fut.done():
                fut.set_result(None)

        async def deliver(i: int, value: Any) -> None:
            pending.append((i, value))
            if not flushed:
                flushed.append(loop.create_future())
                # after the callbacks already queued: the other answers of this turn join the batch
                loop.call_soon(flush)
            await flushed[0]

        async def worker(w: int) -> None:
            while True:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                try:
                    value = await self._call(client, kind, items[i], params)
                except (ModelRequestError, RetriesExhaustedError) as exc:
                    if on_error is None or not exc.row_level:
                        raise
                    on_error(i, exc)
                    continue
                results[i] = value
                # delivered before this worker takes the next item, so a caller that records
                # results (the cache) has recorded this one before the next request goes out
                if on_results is not None:
                    await deliver(i, value)
                elif on_result is not None:
                    on_result(i, value)

        tasks = [asyncio.create_task(worker(w)) for w in range(n_workers)]
        try:
            for fut in asyncio.as_completed(tasks):
                await fut
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            await client.aclose()
        return results

    # -- protocol methods ------------------------------------------------------
    def chat(self, conversations: Sequence[Sequence[Message]], params: GenerationParams) -> list[str]:
        return self.run_batch("chat", conversations, params)

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[str]:
        """Text prompts: sent to /completions, or as one user message when ``endpoint='chat'``."""
        return self.run_batch("complete" if self.endpoint == "completions" else "chat", prompts, params)

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        return self.run_batch("loglikelihood", requests)

    def token_logprobs(self, prompts: Sequence[str]) -> list[list[float]]:
        """Per-token log-probabilities of each prompt (tokens 2..n), via echo."""
        return self.run_batch("score", prompts)


_ROLES = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system"}


def openai_message(m: Message) -> Message:
    """An OpenAI message from either form: ``{role, content}`` or the renderer's ``{role: HUMAN, prompt}``."""
    if "content" in m and m.get("role") in ("user", "assistant", "system", "tool", "developer"):
        return dict(m)
    role = str(m.get("role"))
    return {"role": _ROLES.get(role, role.lower()), "content": m.get("content", m.get("prompt", ""))}


class _Reply:
    __slots__ = ("status_code", "headers", "content", "max_json_depth")

    def __init__(self, status: int, headers: dict[str, str], content: bytes,
                 max_json_depth: int = ReplyLimits.max_json_depth) -> None:
        self.status_code = status
        self.headers = headers
        self.content = content
        self.max_json_depth = max_json_depth

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return loads(self.content, self.max_json_depth)


class TransportError(Exception):
    """A request got no complete HTTP reply (refused or dropped connection, broken reply): retried."""

    kind = "connection"


class ConnectError(TransportError):
    pass


class ReadError(TransportError):
    pass


class RemoteProtocolError(TransportError):
    pass


class TransportTimeout(TransportError):
    kind = "timeout"


class ConnectTimeout(TransportTimeout):
    pass


class ReadTimeout(TransportTimeout):
    pass


class ReplyOversize(TransportError):
    """The reply passed ``max_reply_bytes`` while arriving: the connection is dropped, the request not retried."""

    kind = "too_large"


_MAX_HEAD = 1 << 16  # a reply head larger than this is not an HTTP server talking
_MAX_INTERIM = 16  # ``100 Continue`` and friends before the real reply; a server sending more is stalling
_STATUS = re.compile(r"[1-5][0-9][0-9]")
_DIGITS = re.compile(r"[0-9]{1,18}")
_HEX = re.compile(rb"[0-9a-fA-F]{1,15}")


class _Conn(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: a request is written in one call, the reply parsed as it arrives.

    Parsing in ``data_received`` (no reader tasks, no per-read timeouts or cancel scopes) is what makes
    a request cost a few tens of microseconds of the client's CPU instead of most of a millisecond.
    The timer is one per request: it fires after ``timeout`` seconds with no bytes received, or at the attempt's
    total deadline however the bytes trickle in; the body is capped at ``max_reply_bytes`` as it arrives.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, limits: ReplyLimits) -> None:
        self._loop = loop
        self._limits = limits
        self._timeout = limits.timeout
        self._max_body = limits.max_reply_bytes
        self._due = 0.0  # the attempt's total deadline (loop time)
        self._got = 0  # body bytes of this reply so far (chunked: the chunks kept)
        self._interim = 0
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._buf = bytearray()
        self._waiter: asyncio.Future | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._last = 0.0
        self._head: tuple[int, dict[str, str], bool] | None = None  # status, headers, keep-alive
        self._framing = ""  # "length", "chunked" or "close"
        self._need = 0
        self._chunks: list[bytes] = []
        self.origin: tuple[str, str, int] | None = None
        self._log: ArrivalLog | None = None  # the request's timing record, when the caller asked for one

    # -- asyncio callbacks -----------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        log = self._log
        if log is not None:  # the arrival time first, before any parsing
            log.times.append(time.perf_counter())
        if self._waiter is None:  # bytes nobody asked for: the connection cannot be trusted any more
            self.close()
            return
        self._buf += data
        self._last = self._loop.time()
        try:
            self._parse()
            if self._waiter is not None and self._head is not None and self._got + len(self._buf) > self._max_body:
                raise ReplyOversize(f"the reply is larger than {self._max_body} bytes (max_reply_bytes)")
        except TransportError as exc:
            self._fail(exc)
        except Exception as exc:  # noqa: BLE001 - e.g. MemoryError: the request must still be settled
            self._fail(ReadError(f"the reply could not be read: {type(exc).__name__}: {exc}"))
        if log is not None:
            log.offsets.append(self._body_seen() if self._waiter is not None else ArrivalLog.END)
            if self._waiter is None:
                self._log = None

    def _body_seen(self) -> int:
        """Body bytes of the current reply received so far (framing removed): an offset into the body."""
        if self._head is None:
            return 0
        if self._framing in ("chunked", "trailer"):
            return self._got + (min(len(self._buf), self._need) if self._need > 0 else 0)
        return len(self._buf)

    def eof_received(self) -> bool:
        return False  # close the transport; connection_lost settles a pending reply

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is None:
            return
        if self._head is not None and self._framing == "close":
            self._finish(bytes(self._buf), keep=False)
        elif self._head is None and not self._buf:
            self._fail(RemoteProtocolError("Server disconnected without sending a response."))
        else:
            self._fail(ReadError(f"the connection closed in the middle of the reply ({exc or 'end of stream'})"))

    # -- request ----------------------------------------------------------------
    def request(self, data: bytes, due: float | None = None, log: ArrivalLog | None = None) -> asyncio.Future:
        """Send ``data``; the future settles with the reply, or fails at ``due`` (loop time) at the latest.

        With ``log``, the time just before the write and each read's arrival time and body offset are recorded.
        """
        fut = self._loop.create_future()
        self._waiter = fut
        self._buf.clear()
        self._head = None
        self._got = 0
        self._interim = 0
        self._last = self._loop.time()
        self._due = due if due is not None else self._last + self._limits.total
        self._timer = self._loop.call_at(min(self._last + self._timeout, self._due), self._on_timer)
        self._log = log
        if log is not None:
            log.sent = time.perf_counter()
        self.transport.write(data)  # type: ignore[union-attr]
        return fut

    def _on_timer(self) -> None:
        if self._waiter is None:
            return
        now = self._loop.time()
        if now >= self._due:
            self._timer = None
            self._fail(ReadTimeout(f"the reply did not complete within the deadline of {self._limits.total:g} s "
                                   "(deadline)"))
            return
        due = self._last + self._timeout
        if now < due:  # bytes came in meanwhile: wait for the rest from the last one
            self._timer = self._loop.call_at(min(due, self._due), self._on_timer)
            return
        self._timer = None
        self._fail(ReadTimeout(f"no reply for {self._timeout:g} s"))

    def _fail(self, exc: TransportError) -> None:
        waiter, self._waiter = self._waiter, None
        self._log = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def _finish(self, content: bytes, keep: bool) -> None:
        status, headers, head_keep = self._head  # type: ignore[misc]
        waiter, self._waiter = self._waiter, None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._head = None
        if self._buf:  # more bytes than the reply: not a state to reuse
            keep = False
        if not (keep and head_keep):
            self.close()
        try:
            content = inflate(content, headers.get("content-encoding", ""), self._max_body)
        except ReplyTooLarge as exc:
            if waiter is not None and not waiter.done():
                waiter.set_exception(ReplyOversize(str(exc)))
            return
        if waiter is not None and not waiter.done():
            waiter.set_result(_Reply(status, headers, content, self._limits.max_json_depth))

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    # -- parsing ------------------------------------------------------------------
    def _parse(self) -> None:
        buf = self._buf
        while self._head is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > _MAX_HEAD:
                    raise RemoteProtocolError("the reply head is too large")
                return
            lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
            del buf[: end + 4]
            parts = lines[0].split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not _STATUS.fullmatch(parts[1]):
                raise RemoteProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
            status = int(parts[1])
            headers: dict[str, str] = {}
            for line in lines[1:]:
                k, sep, v = line.partition(":")
                if not sep:
                    raise RemoteProtocolError(f"malformed header line: {line[:80]!r}")
                k = k.strip().lower()
                v = v.strip()
                headers[k] = f"{headers[k]}, {v}" if k in headers else v
            if 100 <= status < 200:  # 100 Continue and friends: the real reply follows
                self._interim += 1
                if self._interim > _MAX_INTERIM:
                    raise RemoteProtocolError(f"more than {_MAX_INTERIM} interim (1xx) replies")
                continue
            conn = headers.get("connection", "").lower()
            keep = "close" not in conn and (parts[0] != "HTTP/1.0" or "keep-alive" in conn)
            self._head = (status, headers, keep)
            if "chunked" in headers.get("transfer-encoding", "").lower():
                self._framing, self._chunks, self._need = "chunked", [], -1
            elif "content-length" in headers:
                length = headers["content-length"]
                if not _DIGITS.fullmatch(length):  # also a repeated header whose copies disagree
                    raise RemoteProtocolError(f"bad Content-Length {length[:40]!r}")
                self._framing, self._need = "length", int(length)
                if self._need > self._max_body:
                    raise ReplyOversize(f"the reply announces {self._need} bytes, more than {self._max_body} "
                                        "(max_reply_bytes)")
            elif status in (204, 304):
                self._framing, self._need = "length", 0
            else:
                self._framing = "close"
        if self._framing == "length":
            if len(buf) >= self._need:
                content = bytes(buf[: self._need])
                del buf[: self._need]
                self._finish(content, keep=True)
        elif self._framing != "close":  # chunked, or in the trailer after the last chunk
            self._parse_chunks()

    def _parse_chunks(self) -> None:
        buf = self._buf
        while True:
            if self._need < 0:  # at a chunk-size line
                eol = buf.find(b"\r\n")
                if eol < 0:
                    if len(buf) > _MAX_HEAD:
                        raise RemoteProtocolError("a chunk-size line is too long")
                    return
                size_text = bytes(buf[:eol]).split(b";", 1)[0].strip()
                if not _HEX.fullmatch(size_text):
                    raise RemoteProtocolError(f"bad chunk size {size_text[:20]!r}")
                self._need = int(size_text, 16)
                if self._got + self._need > self._max_body:
                    raise ReplyOversize(f"the reply is larger than {self._max_body} bytes (max_reply_bytes)")
                del buf[: eol + 2]
                if self._need == 0:
                    self._framing = "trailer"
            if self._framing == "trailer":  # trailer lines up to an empty one end the reply
                while True:
                    eol = buf.find(b"\r\n")
                    if eol < 0:
                        return
                    line = bytes(buf[:eol])
                    del buf[: eol + 2]
                    if not line:
                        self._finish(b"".join(self._chunks), keep=True)
                        return
            if len(buf) < self._need + 2:
                return
            if buf[self._need: self._need + 2] != b"\r\n":
                raise RemoteProtocolError("a chunk is not followed by CRLF")
            self._chunks.append(bytes(buf[: self._need]))
            self._got += self._need
            del buf[: self._need + 2]
            self._need = -1


class _HTTP:
    """A small HTTP/1.1 client on asyncio protocols: keep-alive connections on a free list.

    Callers never have more than ``connections`` requests in flight (one per worker), so a plain free
    list is the whole pool. A connection the server closed while idle is known at once (the event loop
    reads its end of stream), so it is dropped from the list and never written to.
    """

    def __init__(self, connections: int, headers: dict[str, str], limits: ReplyLimits) -> None:
        self._limit = connections
        self._free: list[_Conn] = []
        self._open: set[_Conn] = set()
        self._targets: dict[str, tuple[tuple[str, str, int], bytes]] = {}
        self._headers = "".join(f"{k}: {v}\r\n" for k, v in headers.items() if k.lower() not in (
            "host", "content-length", "connection", "transfer-encoding"))
        self._limits = limits
        self._timeout = limits.timeout
        self._ssl: Any = None

    def _target(self, url: str) -> tuple[tuple[str, str, int], bytes]:
        """(scheme, host, port) and the request head up to ``Content-Length: `` for ``url``, built once."""
        got = self._targets.get(url)
        if got is None:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ConnectError(f"cannot send to {url!r}: only http:// and https:// URLs are supported")
            default = 443 if parts.scheme == "https" else 80
            port = parts.port or default
            host = parts.hostname
            host_header = f"[{host}]" if ":" in host else host
            if port != default:
                host_header += f":{port}"
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            head = (f"POST {path} HTTP/1.1\r\nHost: {host_header}\r\n{self._headers}"
                    "Connection: keep-alive\r\nContent-Length: ").encode("latin-1")
            got = self._targets[url] = ((parts.scheme, host, port), head)
        return got

    async def _connect(self, origin: tuple[str, str, int]) -> _Conn:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        kw: dict[str, Any] = {}
        if scheme == "https":
            if self._ssl is None:
                self._ssl = _ssl_context()
            kw = {"ssl": self._ssl, "server_hostname": host}
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(lambda: _Conn(loop, self._limits), host, port, **kw),
                min(self._timeout, self._limits.total))
        except asyncio.TimeoutError:
            raise ConnectTimeout(f"could not connect to {host}:{port} within {self._timeout:g} s") from None
        except OSError as exc:  # refused, unreachable, DNS, TLS handshake
            raise ConnectError(f"could not connect to {host}:{port}: {exc}") from None
        conn.origin = origin
        self._open.add(conn)
        return conn

    async def post(self, url: str, body: Any, log: ArrivalLog | None = None) -> _Reply:
        try:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in the data: send it \u-escaped
            data = json.dumps(body, ensure_ascii=True).encode("ascii")
        origin, head = self._target(url)
        payload = b"%b%d\r\n\r\n%b" % (head, len(data), data)
        return await self._send(origin, payload, log)

    async def get(self, url: str) -> _Reply:
        """A GET of ``url`` under the same limits (the served-model lookup)."""
        (scheme, host, port), head = self._target(url)
        path = head.split(b" ", 2)[1]
        host_line = head.split(b"\r\n", 2)[1]
        payload = b"GET %b HTTP/1.1\r\n%b\r\n%bConnection: keep-alive\r\n\r\n" % (
            path, host_line, self._headers.encode("latin-1"))
        return await self._send((scheme, host, port), payload)

    async def _send(self, origin: tuple[str, str, int], payload: bytes, log: ArrivalLog | None = None) -> _Reply:
        due = asyncio.get_running_loop().time() + self._limits.total
        conn = None
        while self._free:
            c = self._free.pop()
            if not c.closed and c.origin == origin:
                conn = c
                break
            self._drop(c)
        if conn is None:
            conn = await self._connect(origin)
        try:
            reply = await conn.request(payload, due, log)
        except BaseException:
            self._drop(conn)
            raise
        if conn.closed:
            self._open.discard(conn)
        elif len(self._free) < self._limit:
            self._free.append(conn)
        else:
            self._drop(conn)
        return reply

    def _drop(self, conn: _Conn) -> None:
        self._open.discard(conn)
        conn.close()

    async def aclose(self) -> None:
        self._free.clear()
        for conn in list(self._open):
            self._drop(conn)
        await asyncio.sleep(0)  # let the transports run their close callbacks inside this loop


def served_models(url: str, headers: dict[str, str], limits: ReplyLimits) -> Any:
    """The JSON of a GET of ``url`` (``/v1/models``) under ``limits``, with the lookup's own short timeout.

    ``TransportError`` when there is no complete reply in time or it is too large; ``ValueError`` when it is not
    JSON or not a 200.
    """
    lookup = ReplyLimits(timeout=min(5.0, limits.timeout), deadline=min(20.0, limits.total),
                         max_reply_bytes=min(limits.max_reply_bytes, 8 << 20), max_json_depth=limits.max_json_depth)

    async def fetch() -> _Reply:
        client = _HTTP(1, {"Content-Type": "application/json", **headers}, lookup)
        try:
            return await client.get(url)
        finally:
            await client.aclose()

    reply = _run_sync(fetch())
    if reply.status_code != 200:
        raise ValueError(f"HTTP {reply.status_code}: {_error_text(reply)}")
    return reply.json()


def _ssl_context() -> Any:
    """The system's trust store (``SSL_CERT_FILE`` honoured) plus certifi's bundle when installed, as httpx has."""
    import ssl

    ctx = ssl.create_default_context()
    try:
        import certifi

        ctx.load_verify_locations(certifi.where())
    except ImportError:
        pass
    return ctx


def _chat_content(data: Any) -> str:
    try:
        msg = data["choices"][0]["message"]
        content = msg.get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise _Malformed("the reply has no choices[0].message") from None
    if content is not None and not isinstance(content, str):
        raise _Malformed("choices[0].message.content is not text")
    return content or ""


def _chat_tool_reply(data: Any) -> dict[str, Any]:
    """A function-calling reply: the message's text and its ``tool_calls`` (name + JSON arguments)."""
    content = _chat_content(data)
    calls = data["choices"][0]["message"].get("tool_calls") or []
    if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("function"), dict)
                                              for c in calls):
        raise _Malformed("choices[0].message.tool_calls is not a list of function calls")
    return {"content": content, "tool_calls": [{"id": c.get("id"), "function": {
        "name": c["function"].get("name"), "arguments": c["function"].get("arguments")}} for c in calls]}


def _completion_text(data: Any) -> str:
    try:
        text = data["choices"][0]["text"]
    except (KeyError, IndexError, TypeError):
        raise _Malformed("the reply has no choices[0].text") from None
    if not isinstance(text, str):
        raise _Malformed("choices[0].text is not text")
    return text


def _has_choices(data: Any) -> Any:
    """A completion reply to score: ``choices[0].text`` must be there (``logprobs`` may be absent)."""
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
        raise _Malformed("the reply has no choices")
    if not isinstance(data["choices"][0], dict) or not isinstance(data["choices"][0].get("text"), str):
        raise _Malformed("the reply has no choices[0].text")
    return data


_TRANSIENT = (TransportError,)


def _error_text(resp: _Reply) -> str:
    try:
        data = resp.json()
        err = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(err, dict):
            return str(err.get("message", err))
        return str(err)
    except ValueError:
        return resp.text[:200]


def _uvloop_run() -> Any:
    """uvloop's ``run`` when installed (a dependency on Linux and macOS) and not switched off.

    At 64 requests in flight the answers of one round arrive together and the loop handles them one after the
    other; uvloop's loop halves that wait (84.9% → 91.2% of the concurrency ÷ latency bound in
    benchmarks/api_throughput.py on a 2-core machine). ``PROMPTWEAVE_EVENT_LOOP=asyncio`` keeps the standard loop.
    """
    if os.environ.get("PROMPTWEAVE_EVENT_LOOP", "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return getattr(uvloop, "run", None)


def _run_loop(coro: Awaitable[Any]) -> Any:
    run = _uvloop_run()
    return run(coro) if run is not None else asyncio.run(coro)  # type: ignore[arg-type]


def run_sync(coro: Awaitable[Any]) -> Any:
    """Run a coroutine to completion on this client's event loop (uvloop when installed), also when the caller
    already runs an event loop."""
    return _run_sync(coro)


def _run_sync(coro: Awaitable[Any]) -> Any:
    """Run a coroutine to completion, also when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_loop(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["v"] = _run_loop(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["e"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "e" in box:
        raise box["e"]
    return box["v"]
