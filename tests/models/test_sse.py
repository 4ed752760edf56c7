"""Reading server-sent event streams (models/sse.py)."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.models.sse import data_payloads, json_events


def test_events_split_at_any_blank_line_comments_and_other_fields_skipped():
    body = (b": keep-alive\n\ndata: {\"a\": 1}\r\n\r\nevent: x\nid: 3\ndata: {\"b\":\n"
            b"data: 2}\r\rdata:[DONE]\n\ndata: {\"after\": 1}\n\n")
    assert data_payloads(body) == ['{"a": 1}', '{"b":\n2}']
    assert json_events(body) == [{"a": 1}, {"b": 2}]


def test_a_stream_without_data_or_with_a_non_json_event_is_an_error():
    with pytest.raises(ValueError, match="holds no data events"):
        json_events(b": only a comment\n\n")
    with pytest.raises(ValueError, match="Expecting value"):
        json_events(b"data: <html>\n\n")


@given(st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=8), max_size=3), max_size=6),
       st.sampled_from(["\n\n", "\r\n\r\n", "\r\r"]))
def test_every_event_comes_back_in_order(events, sep):
    body = "".join(f"data: {json.dumps(e)}{sep}" for e in events) + f"data: [DONE]{sep}"
    got = json_events(body) if events else []
    assert got == events
