"""Open-domain QA configs end to end: Natural Questions and TriviaQA (TSV files whose answer lists are Python
literals, parsed, never evaluated)."""
from __future__ import annotations

import pytest
from openai_stub import StubServer

from tests.e2e.harness import by_marker, missing_eval_names, result, run_config


def _tsv(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{q}\t{a!r}\n" for q, a in rows), encoding="utf-8")


def test_nq_gen(tmp_path, cache):
    missing = missing_eval_names(("NQEvaluator",))
    if missing:
        pytest.skip("not implemented in this build: " + ", ".join(missing))
    rows = [("[q0] capital of France", ["Paris"]), ("[q1] largest planet", ["Jupiter", "jupiter"]),
            ("[q2] first president", ["George Washington"])]
    _tsv(cache / "data" / "nq" / "nq-test.qa.csv", rows)
    _tsv(cache / "data" / "nq" / "nq-dev.qa.csv", rows[:1])
    replies = {0: "Paris", 1: "Saturn", 2: "George Washington"}
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, "nq.nq_gen_3dcea1", "nq_datasets")
    assert res.exit_code == 0, res.output
    assert result(work, "nq")["metrics"]["score"] == pytest.approx(100 * 2 / 3)


def test_triviaqa_gen(tmp_path, cache):
    missing = missing_eval_names(("TriviaQAEvaluator",))
    if missing:
        pytest.skip("not implemented in this build: " + ", ".join(missing))
    rows = [("[q0] Who wrote Hamlet?", ["William Shakespeare", "Shakespeare"]), ("[q1] 2+2?", ["four", "4"])]
    _tsv(cache / "data" / "triviaqa" / "trivia-dev.qa.csv", rows)
    _tsv(cache / "data" / "triviaqa" / "trivia-test.qa.csv", rows)
    replies = {0: "Shakespeare", 1: "five"}
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, "triviaqa.triviaqa_gen_2121ce", "triviaqa_datasets")
    assert res.exit_code == 0, res.output
    assert result(work, "triviaqa")["metrics"]["score"] == pytest.approx(50.0)
