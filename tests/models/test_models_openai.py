"""OpenAICompatModel against the loopback stand-in server (stands in for a remote vLLM / llama.cpp service)."""
from __future__ import annotations

import pytest
from openai_stub import Fault, StubServer, fake_token_logprob, transient_faults

from promptweave.errors import ModelError
from promptweave.models.base import GenerationParams
from promptweave.models.openai_compat import ModelRequestError, OpenAICompatModel, RetriesExhaustedError


def fast(url: str, **kw) -> OpenAICompatModel:
    kw.setdefault("backoff_base", 0.0)
    kw.setdefault("timeout", 5.0)
    return OpenAICompatModel(url, "stub-model", api_key="k", **kw)


def test_chat_returns_scripted_answers_in_order(stub_server: StubServer) -> None:
    stub_server.answer = lambda body: "reply to " + body["messages"][-1]["content"]
    m = fast(stub_server.url, concurrency=4)
    convs = [[{"role": "user", "content": f"q{i}"}] for i in range(20)]
    out = m.chat(convs, GenerationParams(max_out_len=8))
    assert out == [f"reply to q{i}" for i in range(20)]
    assert stub_server.total_answered == 20
    body = stub_server.log[0]["body"]
    assert body["max_tokens"] == 8 and body["model"] == "stub-model"


def test_full_endpoint_url_is_accepted_and_stop_is_sent(stub_server: StubServer) -> None:
    stub_server.answer = lambda body: "abc\nSTOP def"
    m = fast(stub_server.url + "/chat/completions", endpoint="completions")
    out = m.generate(["hello"], GenerationParams(stop=("STOP",)))
    assert out == ["abc\n"]
    assert stub_server.log[0]["path"] == "/v1/completions"
    assert stub_server.log[0]["body"]["stop"] == ["STOP"]


def test_transient_faults_are_retried_to_completion() -> None:
    with StubServer(faults=transient_faults(0.3, times=2)) as srv:
        m = fast(srv.url, concurrency=8, max_retries=4)
        convs = [[{"role": "user", "content": f"question {i}"}] for i in range(60)]
        out = m.chat(convs, GenerationParams())
        assert all(isinstance(o, str) and o for o in out)
        assert srv.total_answered == 60
        assert max(srv.received.values()) <= 3  # retries are bounded by the plan
        assert m.stats.retries == srv.total_received - 60 > 0


def test_retry_after_is_honoured() -> None:
    plan = lambda key, attempt, body: Fault("status", 429, retry_after=0.05) if attempt == 1 else None  # noqa: E731
    with StubServer(faults=plan) as srv:
        m = fast(srv.url, max_retries=2)
        assert m.chat([[{"role": "user", "content": "x"}]], GenerationParams())
        assert m.stats.retry_delays == [0.05]


def test_retries_stop_after_a_bounded_number() -> None:
    with StubServer(faults=lambda k, a, b: Fault("status", 500)) as srv:
        m = fast(srv.url, max_retries=3)
        with pytest.raises(RetriesExhaustedError, match="after 4 attempts"):
            m.chat([[{"role": "user", "content": "x"}]], GenerationParams())
        assert srv.total_received == 4


def test_slow_reply_times_out_and_is_retried() -> None:
    # the slow reply outlasts the timeout many times over and the next one has its full 3 s, so the count of
    # attempts does not depend on how loaded the machine is
    plan = lambda key, attempt, body: Fault("slow", delay=60.0) if attempt == 1 else None  # noqa: E731
    with StubServer(faults=plan) as srv:
        m = fast(srv.url, max_retries=2, timeout=3.0)
        assert m.chat([[{"role": "user", "content": "x"}]], GenerationParams())
        assert srv.received.most_common(1)[0][1] == 2


def test_permanent_401_is_a_clear_error_and_keeps_finished_results() -> None:
    plan = lambda key, attempt, body: (  # noqa: E731
        Fault("status", 401, message="invalid api key") if "bad" in str(body["messages"]) else None)
    with StubServer(faults=plan) as srv:
        m = fast(srv.url, concurrency=1, max_retries=5)
        got: dict[int, str] = {}
        convs = [[{"role": "user", "content": c}] for c in ("a", "b", "bad", "c")]
        with pytest.raises(ModelRequestError, match="HTTP 401.*API key.*invalid api key") as ei:
            m.run_batch("chat", convs, GenerationParams(), on_result=got.__setitem__)
        assert isinstance(ei.value, ModelError) and ei.value.status == 401
        assert set(got) == {0, 1}
        assert srv.received.most_common(1)[0][1] == 1  # a 401 is not retried


def test_echo_scoring_and_loglikelihood(stub_server: StubServer) -> None:
    m = fast(stub_server.url)
    [lps] = m.token_logprobs(["the cat sat"])
    assert lps == pytest.approx([fake_token_logprob(" cat"), fake_token_logprob(" sat")])
    [ll] = m.loglikelihood([("the cat", " sat")])
    assert ll == pytest.approx(fake_token_logprob(" sat"))
    body = stub_server.log[0]["body"]
    assert body["echo"] is True and body["max_tokens"] == 1  # the generated token is not scored


def test_server_without_echo_gives_clear_error() -> None:
    with StubServer(supports_echo=False) as srv:
        with pytest.raises(ModelRequestError, match="does not score prompts"):
            fast(srv.url).token_logprobs(["x y"])


def test_renderer_messages_and_text_prompts_reach_chat_endpoint(stub_server: StubServer) -> None:
    m = fast(stub_server.url)  # endpoint="chat" by default
    m.chat([[{"role": "SYSTEM", "prompt": "be brief"}, {"role": "HUMAN", "prompt": "hi"}]], GenerationParams())
    m.generate(["plain text"], GenerationParams())
    assert stub_server.log[0]["body"]["messages"] == [{"role": "system", "content": "be brief"},
                                                      {"role": "user", "content": "hi"}]
    assert stub_server.log[1]["path"] == "/v1/chat/completions"
    assert stub_server.log[1]["body"]["messages"] == [{"role": "user", "content": "plain text"}]


def test_answers_arriving_together_are_handed_over_together_before_more_are_sent() -> None:
    with StubServer(latency=0.02) as srv:
        m = fast(srv.url, concurrency=16)
        batches: list[list] = []
        delivered = [0]

        def on_results(pairs: list) -> None:
            # a worker sends its next request only after its answer is handed over, so no more than
            # ``concurrency`` requests can have gone out beyond the answers handed over before this call
            assert srv.total_received <= delivered[0] + 16
            delivered[0] += len(pairs)
            batches.append(pairs)

        items = [[{"role": "user", "content": f"q{i}"}] for i in range(160)]
        out = m.run_batch("chat", items, GenerationParams(), on_results=on_results)
        got = dict(p for b in batches for p in b)
        assert sorted(got) == list(range(160)) and sum(map(len, batches)) == 160
        assert all(got[i] == out[i] for i in range(160))


def test_an_error_while_handing_over_stops_the_batch() -> None:
    with StubServer() as srv:
        m = fast(srv.url, concurrency=4)
        calls = []

        def on_results(pairs: list) -> None:
            calls.append(pairs)
            if len(calls) == 2:
                raise OSError("disk full")

        with pytest.raises(OSError, match="disk full"):
            m.run_batch("chat", [[{"role": "user", "content": f"q{i}"}] for i in range(40)], GenerationParams(),
                        on_results=on_results)
        assert len(calls) == 2 and srv.total_received < 40


def test_event_loop_is_uvloop_unless_switched_off(monkeypatch):
    """The backend drives its requests on uvloop when installed; PROMPTWEAVE_EVENT_LOOP=asyncio keeps asyncio's."""
    import asyncio

    from promptweave.models import openai_compat

    uvloop = pytest.importorskip("uvloop")

    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    monkeypatch.delenv("PROMPTWEAVE_EVENT_LOOP", raising=False)
    assert openai_compat._run_sync(loop_module()).startswith("uvloop")
    monkeypatch.setenv("PROMPTWEAVE_EVENT_LOOP", "asyncio")
    assert openai_compat._run_sync(loop_module()).startswith("asyncio")
    assert uvloop.run is not None
