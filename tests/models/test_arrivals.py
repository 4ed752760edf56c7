"""Arrival times of a streamed reply (models/arrivals.py and the client's hook in models/openai_compat.py)."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_stub import StubServer

from promptweave.models.arrivals import ArrivalLog, event_spans, timed_events
from promptweave.models.base import GenerationParams
from promptweave.models.openai_compat import OpenAICompatModel, run_sync
from promptweave.models.reply_limits import ReplyLimits, ReplyTooLarge
from promptweave.models.sse import data_payloads


@settings(deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=4), st.integers(), max_size=3), min_size=1, max_size=8),
       st.sampled_from(["\n\n", "\r\n\r\n", "\r\r"]), st.lists(st.integers(1, 40), min_size=1, max_size=30))
def test_each_event_gets_the_time_of_the_read_that_completed_it(events, sep, cuts):
    body = ("".join(f": c\n\ndata: {json.dumps(e)}{sep}" for e in events) + f"data: [DONE]{sep}").encode()
    # the body as it came in reads of the given sizes, read i at time i
    log = ArrivalLog(sent=-1.0)
    pos = 0
    for i, n in enumerate(cuts * (len(body) // sum(cuts) + 1)):
        pos = min(len(body), pos + n)
        log.times.append(float(i))
        log.offsets.append(pos if pos < len(body) else ArrivalLog.END)
        if pos == len(body):
            break
    got = timed_events(body, log)
    assert [e for _, e in got] == events
    assert [p for _, p in event_spans(body)] == data_payloads(body)
    for (t, _), (end, _) in zip(got, event_spans(body), strict=True):
        i = int(t)
        assert log.offsets[i] >= end and (i == 0 or log.offsets[i - 1] < end)
    assert [t for t, _ in got] == sorted(t for t, _ in got)


def test_an_over_long_event_line_is_too_large():
    with pytest.raises(ReplyTooLarge):
        event_spans(b"data: " + b"x" * 100 + b"\n\n", max_event_bytes=50)
    with pytest.raises(ValueError, match="Expecting value"):
        timed_events(b"data: <html>\n\n", ArrivalLog(), ReplyLimits())


def test_the_client_records_the_send_and_every_read_of_a_real_stream():
    with StubServer(answer=lambda b: "alpha beta gamma delta") as server:
        model = OpenAICompatModel(server.url, "m", concurrency=1, backoff_base=0)
        path, body = model.stream_request([{"role": "user", "content": "hi"}], GenerationParams(max_out_len=8))
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}

        async def go():
            client = model.http_client(1)
            try:
                log = ArrivalLog()
                reply = await client.post(model.base_url + path, body, log)
                return log, reply
            finally:
                await client.aclose()

        log, reply = run_sync(go())
    assert reply.status_code == 200
    assert log.sent > 0 and log.times and log.times[0] >= log.sent
    assert log.times == sorted(log.times) and log.offsets == sorted(log.offsets)
    assert log.offsets[-1] == ArrivalLog.END and all(o <= len(reply.content) for o in log.offsets[:-1])
    events = timed_events(reply.content, log)
    texts = [e["choices"][0]["delta"].get("content") for _, e in events if e["choices"]]
    assert "".join(t for t in texts if t) == "alpha beta gamma delta"
    assert all(log.sent <= t <= log.done for t, _ in events)
