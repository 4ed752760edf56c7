"""A hostile or broken server costs one failed row: total deadlines, size caps, inflate caps and JSON depth.

Each case runs a real loopback socket server (``RawServer``) that writes the hostile bytes. Nothing here measures
time: a case that is not bounded would hang and be stopped by the per-test timeout; the assertions are on what the
failed row says and on how many requests the server saw.
"""
from __future__ import annotations

import gzip
import json
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptweave.errors import ModelError
from promptweave.models.aisbench_service import AISBenchServiceModel
from promptweave.models.base import GenerationParams
from promptweave.models.reply_limits import ReplyLimits, ReplyTooLarge, inflate, loads
from promptweave.models.sse import json_events
from tests.models.test_http_client import RawServer, chat_body, chunked, model, with_length
from tests.outcome import value_or_error

PARAMS = GenerationParams()


def run_rows(m, n: int) -> tuple[list, dict[int, ModelError]]:
    """Send ``n`` chat rows; the answers and each failed row's error."""
    errors: dict[int, ModelError] = {}
    out = m.run_batch("chat", [[{"role": "user", "content": f"q{i}"}] for i in range(n)], PARAMS,
                      on_error=lambda i, exc: errors.__setitem__(i, exc))
    return out, errors


def drip(data: bytes, every: float = 0.05) -> list:
    """``data`` one byte at a time, ``every`` seconds apart."""
    out: list = []
    for b in data:
        out += [bytes([b]), ("sleep", every)]
    return out


def deep(n: int) -> bytes:
    return b"[" * n + b"]" * n


# -- time -------------------------------------------------------------------------------------------------------
def test_a_dripping_body_ends_at_the_deadline_although_bytes_keep_coming() -> None:
    body = chat_body("x" * 200)
    script = lambda n: drip(with_length(body))  # noqa: E731 - each byte well inside the idle timeout
    with RawServer(script) as srv:
        out, errors = run_rows(model(srv.url, timeout=2.0, deadline=0.6, max_retries=0), 1)
    assert out == [None]
    assert "deadline" in errors[0].message and "0.6" in errors[0].message


def test_a_head_that_never_ends_and_endless_100_continue_each_fail_one_row() -> None:
    endless_head = lambda n: drip(b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 1000)  # noqa: E731
    with RawServer(endless_head) as srv:
        _, errors = run_rows(model(srv.url, timeout=2.0, deadline=0.5, max_retries=0), 1)
    assert "deadline" in errors[0].message
    continues = lambda n: [b"HTTP/1.1 100 Continue\r\n\r\n"] * 40 + ["hang"]  # noqa: E731
    with RawServer(continues) as srv:
        _, errors = run_rows(model(srv.url, timeout=2.0, deadline=30.0, max_retries=0), 1)
    assert "interim" in errors[0].message


def test_an_event_stream_of_keep_alive_comments_ends_at_the_deadline() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    ping = b"%x\r\n: ping\n\n\r\n" % len(b": ping\n\n")
    script = lambda n: [head] + [ping, ("sleep", 0.05)] * 2000  # noqa: E731
    with RawServer(script) as srv:
        _, errors = run_rows(model(srv.url, timeout=2.0, deadline=0.5, max_retries=0), 1)
    assert "deadline" in errors[0].message


def test_the_deadline_is_per_attempt_and_every_attempt_is_bounded() -> None:
    body = chat_body("y" * 100)
    with RawServer(lambda n: drip(with_length(body))) as srv:
        _, errors = run_rows(model(srv.url, timeout=2.0, deadline=0.3, max_retries=2), 1)
        assert srv.requests == 3
    assert errors[0].attempts == 3


# -- size ---------------------------------------------------------------------------------------------------------
def test_a_body_past_the_cap_fails_the_row_unretried_and_the_others_complete() -> None:
    big = b"x" * (3 << 20)

    def script(n: int) -> list:
        if n == 1:
            return [chunked(big, [1 << 16] * 48)]
        return [with_length(chat_body(f"a{n}"))]

    with RawServer(script) as srv:
        out, errors = run_rows(model(srv.url, concurrency=1, max_retries=3, max_reply_bytes=1 << 20), 4)
        assert srv.requests == 4  # the flooding one was not asked again
    assert list(errors) == [1] and "max_reply_bytes" in errors[1].message
    assert [out[i] for i in (0, 2, 3)] == ["a0", "a2", "a3"]


def test_an_announced_length_past_the_cap_fails_before_the_body_arrives() -> None:
    script = lambda n: [b"HTTP/1.1 200 OK\r\nContent-Length: 900000000000\r\n\r\n", "hang"]  # noqa: E731
    with RawServer(script) as srv:
        _, errors = run_rows(model(srv.url, max_retries=2, max_reply_bytes=1 << 20), 1)
        assert srv.requests == 1
    assert "900000000000" in errors[0].message


def test_a_close_delimited_flood_is_capped_too() -> None:
    script = lambda n: [b"HTTP/1.0 200 OK\r\n\r\n"] + [b"z" * (1 << 16)] * 64 + ["hang"]  # noqa: E731
    with RawServer(script) as srv:
        _, errors = run_rows(model(srv.url, max_retries=1, max_reply_bytes=1 << 20), 1)
    assert "max_reply_bytes" in errors[0].message


def test_a_gzip_bomb_is_inflated_only_up_to_the_cap() -> None:
    bomb = gzip.compress(b"[" + b"0," * (8 << 20) + b"0]", compresslevel=9)
    assert len(bomb) < 1 << 20
    script = lambda n: [with_length(bomb, "Content-Encoding: gzip\r\n")]  # noqa: E731
    with RawServer(script) as srv:
        _, errors = run_rows(model(srv.url, max_retries=2, max_reply_bytes=2 << 20), 1)
        assert srv.requests == 1
    assert "inflates" in errors[0].message
    # within the cap a gzip reply is read as before
    small = gzip.compress(chat_body("ok"))
    with RawServer(lambda n: [with_length(small, "Content-Encoding: gzip\r\n")]) as srv:
        out, errors = run_rows(model(srv.url, max_reply_bytes=2 << 20), 1)
    assert out == ["ok"] and not errors


def test_inflate_never_returns_more_than_the_limit() -> None:
    data = zlib.compress(b"a" * 100_000)
    assert inflate(data, "deflate", 100_000) == b"a" * 100_000
    with pytest.raises(ReplyTooLarge):
        inflate(data, "deflate", 99_999)
    assert inflate(b"not gzip", "gzip", 10) == b"not gzip"


# -- depth --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["ok", "error", "event"])
def test_json_nested_200000_deep_is_one_failed_row_and_the_run_goes_on(where: str) -> None:
    hostile = deep(200_000)

    def script(n: int) -> list:
        if n != 1:
            return [with_length(chat_body(f"a{n}"))]
        if where == "ok":
            return [with_length(hostile)]
        if where == "error":
            return [b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n%b" % (len(hostile), hostile)]
        event = b"data: " + hostile + b"\n\n"
        return [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n%b"
                % (len(event), event)]

    with RawServer(script) as srv:
        out, errors = run_rows(model(srv.url, concurrency=1, max_retries=0), 3)
    assert list(errors) == [1]
    assert [out[0], out[2]] == ["a0", "a2"]


def test_a_streamed_event_nested_deep_or_a_line_past_the_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="nested deeper"):
        json_events(b"data: " + deep(200_000) + b"\n\n")
    with pytest.raises(ValueError, match="nested deeper"):
        json_events(b"data: " + deep(100) + b"\n\n", ReplyLimits(max_json_depth=50))
    with pytest.raises(ReplyTooLarge, match="max_event_bytes"):
        json_events(b'data: "' + b"q" * 5000 + b'"\n\n', ReplyLimits(max_event_bytes=4096))
    assert json_events(b'data: {"a": [1]}\n\ndata: [DONE]\n\n') == [{"a": [1]}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(st.none() | st.integers() | st.text(max_size=5),
                    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3),
                    max_leaves=40),
       st.integers(min_value=1, max_value=12))
def test_loads_accepts_exactly_the_values_within_the_depth(value, limit: int) -> None:
    def depth(v) -> int:
        if isinstance(v, dict):
            return 1 + max((depth(c) for c in v.values()), default=0)
        if isinstance(v, list):
            return 1 + max((depth(c) for c in v), default=0)
        return 0

    text = json.dumps(value)
    if depth(value) <= limit:
        assert loads(text, limit) == value
    else:
        with pytest.raises(ValueError, match="nested deeper"):
            loads(text, limit)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"a":', b"1", b",", b'"', b"\\"]), max_size=3000))
def test_loads_raises_only_value_error_on_any_bracket_soup(parts: list[bytes]) -> None:
    data = b"".join(parts)
    value, exc = value_or_error(loads, data, expected=ValueError)
    if exc is None:  # what parses is what the standard parser reads
        assert value == json.loads(data)


# -- limits as settings --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key,value", [("deadline", 0), ("deadline", float("inf")), ("max_reply_bytes", -1),
                                       ("max_json_depth", "deep"), ("max_event_bytes", 1.5)])
def test_a_bad_limit_is_a_typed_error_naming_its_field(key: str, value) -> None:
    from promptweave.models.factory import reply_limits

    with pytest.raises(ModelError) as info:
        reply_limits({"type": "OpenAISDK", key: value})
    assert info.value.field == f"models[].{key}"


def test_the_deadline_defaults_to_four_idle_timeouts() -> None:
    assert ReplyLimits(timeout=3).total == 12.0
    assert ReplyLimits(timeout=3, deadline=5).total == 5.0


# -- the AISBench served-model lookup ----------------------------------------------------------------------------------
def aisbench(url: str, **kw) -> AISBenchServiceModel:
    host, port = url.split("//")[1].split("/")[0].split(":")
    cfg = {"host_ip": host, "host_port": int(port), "model": ""}
    return AISBenchServiceModel(cfg, type_name="VLLMCustomAPIChat", name="m", backoff_base=0.0, **kw)


def test_the_served_model_lookup_is_bounded_too() -> None:
    listing = json.dumps({"data": [{"id": "served"}]}).encode()
    with RawServer(lambda n: drip(with_length(listing), 0.05)) as srv:
        m = aisbench(srv.url, timeout=2.0, deadline=0.5)
        with pytest.raises(ModelError, match="did not name the served model"):
            m.chat([[{"role": "user", "content": "q"}]], PARAMS)
    with RawServer(lambda n: [with_length(deep(200_000))]) as srv:
        with pytest.raises(ModelError, match="nested deeper"):
            aisbench(srv.url).chat([[{"role": "user", "content": "q"}]], PARAMS)
    with RawServer(lambda n: [with_length(listing) if n == 0 else with_length(chat_body("hi"))]) as srv:
        assert aisbench(srv.url).chat([[{"role": "user", "content": "q"}]], PARAMS) == ["hi"]
