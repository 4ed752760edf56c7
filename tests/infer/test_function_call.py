"""Function calling: BFCL functions as OpenAI tools, replies decoded, models and categories refused by name,
and the calls sent over real loopback HTTP with the answers cached."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.errors import DataError, UnsupportedError
from promptweave.infer.cache import ResponseCache
from promptweave.infer.function_call import (
    check_category,
    check_model,
    decode_reply,
    infer_function_calls,
    language_notes,
    to_openai_tools,
    tool_request,
)
from promptweave.models.base import GenerationParams
from promptweave.models.openai_compat import OpenAICompatModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
from openai_stub import StubServer  # noqa: E402

from tests.outcome import value_or_error

FN = {"name": "geo.find", "description": "Find a place.",
      "parameters": {"type": "dict", "required": ["q"],
                     "properties": {"q": {"type": "string", "description": "query"},
                                    "r": {"type": "float", "description": "radius"},
                                    "tags": {"type": "array", "items": {"type": "string"}, "description": "t"},
                                    "opts": {"type": "dict", "description": "o",
                                             "properties": {"n": {"type": "integer", "description": "n"}}},
                                    "anything": {"type": "any", "description": "a"},
                                    "plain": {"description": "no type"}}}}


def _row(i=0, category="simple"):
    return {"id": f"{category}_{i}", "question": json.dumps([[{"role": "user", "content": f"find {i}"}]]),
            "function": json.dumps([FN])}


def test_tools_map_bfcl_types_to_json_schema():
    tool = to_openai_tools(language_notes([FN], "simple"))[0]
    f = tool["function"]
    assert tool["type"] == "function" and f["name"] == "geo_find"
    props = f["parameters"]["properties"]
    assert f["parameters"]["type"] == "object"
    assert props["r"]["type"] == "number" and props["r"]["format"] == "float"
    assert props["r"]["description"].endswith("This is a float type value.")
    assert props["opts"]["type"] == "object" and props["opts"]["properties"]["n"]["type"] == "integer"
    assert props["anything"]["type"] == "string" and props["plain"]["type"] == "string"
    assert f["description"] == "Find a place.\n Note that the provided function is in Python 3 syntax."
    assert FN["parameters"]["type"] == "dict"  # the row's own data is not changed


def test_java_parameters_become_strings_with_their_type_in_words():
    fn = {"name": "A.b", "description": "d", "parameters": {"type": "dict", "properties": {
        "xs": {"type": "ArrayList", "description": "list.", "items": {"type": "String"}},
        "n": {"type": "int", "description": "num."}}}}
    f = to_openai_tools(language_notes([fn], "java"))[0]["function"]
    xs, n = f["parameters"]["properties"]["xs"], f["parameters"]["properties"]["n"]
    assert xs["type"] == "string" and "items" not in xs
    assert "This is Java ArrayList type parameter in string representation." in xs["description"]
    assert "The list elements are of type String" in xs["description"]
    assert n["type"] == "string" and f["description"].endswith("Java 8 SDK syntax.")


def test_decode_reply_prefers_tool_calls_then_text():
    reply = {"content": "", "tool_calls": [{"function": {"name": " f ", "arguments": '{"a": 1}'}}]}
    assert decode_reply(reply) == [{"f": '{"a": 1}'}]
    assert decode_reply({"content": "no call", "tool_calls": []}) == "no call"
    assert decode_reply({"content": "", "tool_calls": None}) == []


@given(st.text(max_size=30))
def test_a_bad_question_column_is_a_typed_error(text):
    row = {"id": "simple_0", "question": text, "function": "[]"}
    req, exc = value_or_error(tool_request, row, expected=DataError)
    if exc is not None:
        assert exc.code.startswith("PW2")
    else:  # only a JSON list of message lists gets through
        assert isinstance(json.loads(text), list)
        assert req.messages == [dict(m) for m in json.loads(text)[0]]


def test_local_models_and_multi_turn_categories_are_refused_by_name():
    with pytest.raises(UnsupportedError, match="needs an API model with tool calling"):
        check_model({"type": "HuggingFaceBaseModel"}, file="x.py", where="models[0]")
    check_model({"type": "OpenAISDK"}, file="x.py", where="models[0]")
    with pytest.raises(UnsupportedError, match="multi_turn_base") as exc:
        check_category({"category": "multi_turn_base"}, file="cfg.py", where="datasets[0]")
    assert "cfg.py" in str(exc.value)
    check_category({"category": "live_parallel"}, file="cfg.py", where="datasets[0]")


def test_calls_go_over_http_with_tools_and_are_cached(tmp_path):
    rows = {0: _row(0), 1: _row(1)}
    with StubServer(tool_calls=lambda b: [("geo_find", {"q": b["messages"][0]["content"]})]) as server:
        model = OpenAICompatModel(server.url, "m", backoff_base=0)
        with ResponseCache(tmp_path / "c.sqlite") as cache:
            got = infer_function_calls(model, rows, GenerationParams(), cache)
            again = infer_function_calls(model, rows, GenerationParams(), cache)
        sent = server.total_received
        tools = [e["body"]["tools"][0]["function"]["name"] for e in server.log]
    assert {k: v[1] for k, v in got.items()} == {0: [{"geo_find": '{"q": "find 0"}'}],
                                                 1: [{"geo_find": '{"q": "find 1"}'}]}
    assert {k: v[1] for k, v in again.items()} == {k: v[1] for k, v in got.items()}
    assert sent == 2 and tools == ["geo_find", "geo_find"]  # the second pass came from the cache
