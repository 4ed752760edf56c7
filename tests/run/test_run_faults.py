"""Runs against a flaky or refusing service (the loopback stand-in server)."""
from __future__ import annotations

import json

from openai_stub import Fault, StubServer, transient_faults
from toy_run import toy_tasks

from promptweave.run import run_tasks, summary_table


def test_transient_failures_complete_every_row(tmp_path) -> None:
    with StubServer(faults=transient_faults(0.3, times=2, seed=7)) as srv:
        outs = run_tasks(toy_tasks(srv.url, concurrency=8, n_gen=40, n_ppl=10, max_retries=4), tmp_path,
                         show_progress=False)
        assert all(o.ok for o in outs), [o.error for o in outs]
        assert len(srv.answered) == 40 + 40 and max(srv.answered.values()) == 1
        retried = [k for k, n in srv.received.items() if n > 1]
        assert retried and max(srv.received.values()) <= 3  # bounded: at most the plan's 2 failures + 1
    lines = (tmp_path / "predictions" / "stub-model" / "toy-gen.jsonl").read_text().splitlines()
    assert len(lines) == 40
    row = json.loads(lines[0])
    assert set(row) >= {"index", "prompt", "shot_ids", "output", "prediction", "gold", "correct"}


def test_permanent_401_stops_the_task_and_keeps_finished_work(tmp_path) -> None:
    bad_after = {"n": 0}

    def plan(key, attempt, body):  # the key is revoked after 3 answers
        if body.get("messages") is None:
            return None
        bad_after["n"] += 1
        return Fault("status", 401, message="Incorrect API key provided") if bad_after["n"] > 3 else None

    with StubServer(faults=plan) as srv:
        outs = run_tasks(toy_tasks(srv.url, concurrency=1), tmp_path, show_progress=False)
        gen, ppl = outs
        assert not gen.ok and "HTTP 401" in gen.error and "API key" in gen.error
        assert ppl.ok  # other tasks still run
        result = json.loads((tmp_path / "results" / "stub-model" / "toy-gen.json").read_text())
        assert result["status"] == "failed" and "401" in result["error"]
        assert not (tmp_path / "predictions" / "stub-model" / "toy-gen.jsonl").exists()
        answered_before = sum(n for k, n in srv.answered.items())

        srv.faults = None  # the key is fixed; rerun the same command
        outs = run_tasks(toy_tasks(srv.url, concurrency=1), tmp_path, show_progress=False)
        assert all(o.ok for o in outs)
        assert max(srv.answered.values()) == 1  # the 3 answers from before were not asked for again
        assert sum(srv.answered.values()) == answered_before + 7
    table = summary_table(outs)
    assert table.row_count == 2
