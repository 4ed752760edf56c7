"""The stand-in server itself: routes, counters, scripted faults (checked with a plain httpx client)."""
from __future__ import annotations

import httpx
import pytest
from openai_stub import Fault, StubServer, request_key


def test_chat_completion_and_counters() -> None:
    with StubServer(answer=lambda body: "hello") as srv:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        r = httpx.post(srv.url + "/chat/completions", json=body)
        assert r.json()["choices"][0]["message"]["content"] == "hello"
        assert srv.answered[request_key("/v1/chat/completions", body)] == 1
        assert httpx.get(srv.url + "/models").json()["data"][0]["id"] == "stub"


def test_faults_429_with_retry_after_then_drop() -> None:
    plan = lambda key, attempt, body: {1: Fault("status", 429, retry_after=3), 2: Fault("drop")}.get(attempt)  # noqa
    with StubServer(faults=plan) as srv:
        body = {"model": "m", "prompt": "x"}
        r = httpx.post(srv.url + "/completions", json=body)
        assert r.status_code == 429 and r.headers["retry-after"] == "3"
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(srv.url + "/completions", json=body)
        assert httpx.post(srv.url + "/completions", json=body).status_code == 200
        assert srv.total_received == 3 and srv.total_answered == 1


def test_a_stream_request_gets_events_as_vllm_sends_them() -> None:
    import json

    with StubServer(answer=lambda b: "one two  three") as srv:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                "stream_options": {"include_usage": True}}
        r = httpx.post(srv.url + "/chat/completions", json=body)
        plain = httpx.post(srv.url + "/completions", json={"model": "m", "prompt": "x", "stream": True})
    assert r.headers["content-type"] == "text/event-stream"
    lines = [ln for ln in r.text.split("\n\n") if ln]
    assert lines[-1] == "data: [DONE]"
    events = [json.loads(ln.removeprefix("data: ")) for ln in lines[:-1]]
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events if e["choices"]) == "one two  three"
    assert events[-1]["choices"] == [] and events[-1]["usage"]["completion_tokens"] > 0
    texts = [json.loads(ln.removeprefix("data: ")) for ln in plain.text.split("\n\n") if ln and "[DONE]" not in ln]
    assert "".join(e["choices"][0]["text"] for e in texts) == "one two  three"
    assert all(e["choices"] for e in texts)  # no usage event unless asked for
