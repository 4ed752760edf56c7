"""AISBench's service model classes: the URL, the messages and the request body AISBench sends, over real HTTP to
the loopback stand-in server."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai_stub import StubServer

from promptweave.compat.models import default_dialect, default_meta_template
from promptweave.compat.service_types import DEFAULT_CHAT_META
from promptweave.engine.spec import ModelSpec
from promptweave.models.aisbench_service import AISBenchServiceModel, base_url, to_messages
from promptweave.models.base import GenerationParams
from promptweave.models.factory import build_model
from promptweave.prompt.dialogue import Dialogue, SectionMark, Turn
from promptweave.render.chat import render_chat


def _cfg(server, type_="VLLMCustomAPIChat", **kw):
    cfg = dict(attr="service", type=type_, abbr="svc", path="", model="served", stream=False, retry=2,
               api_key="", host_ip="127.0.0.1", host_port=server.port, url="", max_out_len=64, batch_size=2,
               generation_kwargs=dict(temperature=0.01, ignore_eos=False, top_k=5))
    cfg.update(kw)
    return cfg


@pytest.mark.parametrize(("cfg", "want"), [
    ({"host_ip": "10.0.0.5", "host_port": 9000}, "http://10.0.0.5:9000/"),
    ({"host_ip": "::1", "host_port": 80}, "http://[::1]:80/"),
    ({"host_ip": "box", "host_port": 1, "enable_ssl": True}, "https://box:1/"),
    ({"url": "myhost:8000"}, "http://myhost:8000"),
    ({"url": " http://h:1/api ", "host_ip": "ignored"}, "http://h:1/api/"),
    ({"url": "https://h/x/"}, "https://h/x/"),
    ({}, "http://localhost:8080/"),
])
def test_base_url_follows_aisbench(cfg, want):
    assert base_url(cfg) == want


def test_messages_map_roles_and_keep_other_keys():
    rendered = [{"role": "SYSTEM", "prompt": "be brief", "name": "sys"}, {"role": "HUMAN", "prompt": "hi"},
                {"role": "BOT", "prompt": "hello"}, {"role": "TOOL", "prompt": "42"}, {"role": "critic", "prompt": "x"}]
    assert to_messages(rendered) == [
        {"content": "be brief", "role": "system", "name": "sys"}, {"content": "hi", "role": "user"},
        {"content": "hello", "role": "assistant"}, {"content": "42", "role": "tool"},
        {"content": "x", "role": "critic"}]
    assert to_messages("plain") == [{"role": "user", "content": "plain"}]


def test_chat_type_defaults_to_aisbench_meta_so_rounds_are_separate_messages():
    cfg = {"type": "VLLMCustomAPIChat"}
    assert default_meta_template(cfg) is DEFAULT_CHAT_META
    assert default_dialect(cfg) == "aisbench"
    assert default_meta_template({"type": "VLLMCustomAPI"}) is None  # completions: plain text
    assert default_dialect({"type": "OpenAISDK"}) == "promptweave"
    spec = ModelSpec.from_config(cfg)
    shots = Dialogue((SectionMark("round", "begin"), Turn("HUMAN", "Q1"), Turn("BOT", "A1"), Turn("HUMAN", "Q2"),
                      SectionMark("round", "end")))
    msgs = to_messages(render_chat(shots, spec.meta, "gen"))
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert [m["content"] for m in msgs] == ["Q1", "A1", "Q2"]


def test_chat_body_is_aisbench_s(tmp_path):
    with StubServer(answer=lambda b: "ok") as server:
        model = build_model(_cfg(server))
        assert isinstance(model, AISBenchServiceModel)
        out = model.run_batch("chat", [[{"role": "HUMAN", "prompt": "Q"}]],
                              GenerationParams(max_out_len=64, temperature=0.7, stop=("\n",)))
        (entry,) = server.log
    assert out == ["ok"]
    assert entry["path"] == "/v1/chat/completions"
    # the config's generation_kwargs verbatim; no stop words, no temperature of promptweave's own
    assert entry["body"] == {"stream": False, "messages": [{"content": "Q", "role": "user"}], "temperature": 0.01,
                             "ignore_eos": False, "top_k": 5, "max_tokens": 64, "model": "served"}


def test_completions_body_and_model_from_the_server(tmp_path):
    with StubServer(answer=lambda b: " B") as server:
        model = build_model(_cfg(server, type_="VLLMCustomAPI", model="", generation_kwargs=None))
        out = model.run_batch("complete", ["Question: x\nAnswer:"], GenerationParams(max_out_len=8))
        (entry,) = server.log
    assert out == [" B"]
    assert entry["path"] == "/v1/completions"
    assert entry["body"] == {"prompt": "Question: x\nAnswer:", "stream": False, "max_tokens": 8, "model": "stub"}


@pytest.mark.parametrize("type_", ["VLLMCustomAPIChatStream", "VllmMultiturnAPIChatStream", "VLLMCustomAPIChat"])
def test_streaming_chat_sends_aisbench_s_body_and_reads_the_event_stream(type_):
    reply = "The answer is 42, as  said.\nDone."
    with StubServer(answer=lambda b: reply) as server:
        # the ...Stream classes stream whatever the config says; VLLMCustomAPIChat when stream=True
        model = build_model(_cfg(server, type_=type_, stream=type_ == "VLLMCustomAPIChat"))
        out = model.run_batch("chat", [[{"role": "HUMAN", "prompt": "Q"}]], GenerationParams(max_out_len=16))
        (entry,) = server.log
    assert out == [reply]  # put back together from one event per token
    assert entry["body"] == {"stream": True, "stream_options": {"include_usage": True},
                             "messages": [{"content": "Q", "role": "user"}], "temperature": 0.01,
                             "ignore_eos": False, "top_k": 5, "max_tokens": 16, "model": "served"}


def test_streaming_completions_and_the_order_aisbench_merges_stream_options_in():
    with StubServer(answer=lambda b: " B because") as server:
        # generation_kwargs cannot take stream_options away from a completions body (set after them), but can
        # from a chat one (set before them): the reference's order
        gk = dict(temperature=0.01, stream_options={"include_usage": False})
        comp = build_model(_cfg(server, type_="VLLMCustomAPI", stream=True, generation_kwargs=gk))
        assert comp.run_batch("complete", ["Q:"], GenerationParams(max_out_len=8)) == [" B because"]
        chat = build_model(_cfg(server, type_="VLLMCustomAPIChat", stream=True, generation_kwargs=gk))
        assert chat.run_batch("chat", ["Q:"], GenerationParams(max_out_len=8)) == [" B because"]
        first, second = server.log
    assert first["path"] == "/v1/completions"
    assert first["body"] == {"prompt": "Q:", "stream": True, "stream_options": {"include_usage": True},
                             "temperature": 0.01, "max_tokens": 8, "model": "served"}
    assert second["body"]["stream_options"] == {"include_usage": False}


def test_non_streaming_bodies_stay_as_they_were():
    with StubServer(answer=lambda b: "ok") as server:
        model = build_model(_cfg(server, type_="VLLMCustomAPIChat", stream=False))
        model.run_batch("chat", ["hi"], GenerationParams(max_out_len=4))
        (entry,) = server.log
    assert entry["body"]["stream"] is False and "stream_options" not in entry["body"]
    assert "stream" not in model.identity()  # cache keys of non-streamed answers are unchanged


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_is_joined_before_the_content_as_aisbench_predicts(stream):
    with StubServer(answer=lambda b: "Paris", reasoning=lambda b: "France's capital") as server:
        model = build_model(_cfg(server, stream=stream))
        out = model.run_batch("chat", ["capital?"], GenerationParams(max_out_len=8))
    assert out == ["France's capital</think>Paris"]


def test_a_stream_that_is_not_json_is_retried_then_failed():
    from openai_stub import Fault

    from promptweave.errors import ModelError

    bad = Fault("malformed", body="data: <html>oops</html>\n\n")
    with StubServer(answer=lambda b: "ok", faults=lambda k, a, b: bad if a == 1 else None) as srv:
        model = build_model(_cfg(srv, stream=True, retry=2, backoff_base=0))
        assert model.run_batch("chat", ["hi"], GenerationParams(max_out_len=4)) == ["ok"]
    with StubServer(faults=lambda k, a, b: bad) as srv:
        model = build_model(_cfg(srv, stream=True, retry=2, backoff_base=0))
        with pytest.raises(ModelError, match="not JSON"):
            model.run_batch("chat", ["hi"], GenerationParams(max_out_len=4))


def test_an_unreachable_model_listing_is_a_typed_error():
    from promptweave.errors import ModelError

    with StubServer() as server:
        port = server.port
    model = AISBenchServiceModel({"host_ip": "127.0.0.1", "host_port": port}, type_name="VLLMCustomAPIChat",
                                 name="svc", max_retries=0)
    with pytest.raises(ModelError, match="did not name the served model"):
        model.run_batch("chat", ["hi"], GenerationParams(max_out_len=4))


@given(st.lists(st.fixed_dictionaries({"role": st.sampled_from(["HUMAN", "BOT", "SYSTEM", "x"]),
                                       "prompt": st.text(max_size=20)}), max_size=6))
def test_every_rendered_message_keeps_its_text_and_order(items):
    msgs = to_messages(items)
    assert [m["content"] for m in msgs] == [i["prompt"] for i in items]
    assert all(m["role"] in ("user", "assistant", "system", "x") for m in msgs)


def test_retry_counts_every_attempt_as_in_aisbench():
    from openai_stub import Fault

    from promptweave.errors import ModelError

    with StubServer(answer=lambda b: "ok", faults=lambda k, a, b: Fault("status", 503) if a == 1 else None) as srv:
        model = build_model(_cfg(srv, retry=2, backoff_base=0))
        assert model.run_batch("chat", ["hi"], GenerationParams(max_out_len=4)) == ["ok"]
    with StubServer(faults=lambda k, a, b: Fault("status", 503)) as srv:
        model = build_model(_cfg(srv, retry=2, backoff_base=0))
        with pytest.raises(ModelError):
            model.run_batch("chat", ["hi"], GenerationParams(max_out_len=4))
        assert len(srv.log) == 2  # retry=2: two requests in all


def test_a_server_that_answers_a_stream_request_whole_is_read():
    from openai_stub import Fault

    whole = Fault("malformed", body='{"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}')
    with StubServer(faults=lambda k, a, b: whole) as srv:
        model = build_model(_cfg(srv, stream=True, retry=1))
        assert model.run_batch("chat", ["hi"], GenerationParams(max_out_len=4)) == ["ok"]
        assert srv.log[0]["body"]["stream"] is True
