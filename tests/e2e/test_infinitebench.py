"""InfiniteBench code_debug as shipped: its template writes ``{OPTION_A}`` where the loader makes ``option_A``, so
OpenCompass sends the placeholder unfilled; promptweave sends it the same way, warns, and scores the run."""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.e2e.harness import by_marker, predictions, result, run_config

OPTIONS = [["parse", "load", "save", "emit"], ["walk", "run", "jump", "sit"], ["a1", "b2", "c3", "d4"]]
GOLD = ["load", "sit", "a1"]  # letters B, D, A


def test_infinitebench_codedebug_sends_the_near_miss_placeholder_as_written(tmp_path, cache) -> None:
    data = tmp_path / "data" / "InfiniteBench"
    data.mkdir(parents=True)
    (data / "code_debug.jsonl").write_text("".join(json.dumps(
        {"id": i, "context": f"[q{i}] def {o[0]}(): pass", "input": "", "options": o, "answer": [g]}) + "\n"
        for i, (o, g) in enumerate(zip(OPTIONS, GOLD, strict=True))), encoding="utf-8")
    replies = {0: "B", 1: "The answer is C", 2: "A"}
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, "infinitebench.infinitebenchcodedebug."
                               "infinitebench_codedebug_gen_276a42", "InfiniteBench_codedebug_datasets")
        sent = [e["body"]["messages"] for e in server.log]
    assert res.exit_code == 0, res.output
    assert "placeholder {OPTION_A} names no column but resembles {option_A}; it is sent as written" in res.output
    assert result(work, "InfiniteBench_codedebug")["metrics"]["accuracy"] == pytest.approx(100 * 2 / 3)
    assert len(sent) == 3
    user = sent[0][-1]["content"]
    assert "\nA. {OPTION_A}\nB. {OPTION_B}\nC. {OPTION_C}\nD. {OPTION_D}\n" in user and "parse" not in user.split(
        "Which funtion")[1]
    assert [p["gold"] for p in predictions(work, "InfiniteBench_codedebug")] == ["B", "D", "A"]
