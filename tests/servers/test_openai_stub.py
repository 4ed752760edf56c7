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
