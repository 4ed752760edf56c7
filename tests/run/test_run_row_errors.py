"""Rows that fail on their own: recorded, scored per --on-row-error, retried alone on the next run
(real HTTP to the loopback stand-in server)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_stub import EVERY_FAULT, MALFORMED_200, Fault, StubServer, transient_faults
from test_run_cli import API_MODEL, write_config
from toy_run import toy_tasks
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.cli.common import ExitCode
from promptweave.errors import PromptweaveWarning
from promptweave.run import run_tasks


def run(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-progress"])


def files(work: Path) -> dict[str, str]:
    return {str(p.relative_to(work)): p.read_text() for p in sorted((work / "predictions").rglob("*.jsonl"))}


def metrics(work: Path) -> dict[str, dict]:
    return {str(p.relative_to(work)): json.loads(p.read_text())["metrics"]
            for p in sorted((work / "results").rglob("*.json"))}


def test_every_fault_kind_at_30_percent_finishes_with_fault_free_scores(tmp_path) -> None:
    with StubServer() as clean:
        run_tasks(toy_tasks(clean.url, concurrency=8, n_gen=60, n_ppl=15), tmp_path / "clean", show_progress=False)
    with StubServer(faults=transient_faults(0.3, times=2, seed=3, kinds=EVERY_FAULT)) as srv:
        tasks = toy_tasks(srv.url, concurrency=8, n_gen=60, n_ppl=15)
        for t in tasks:  # a client timeout below the stand-in's 3 s slow replies
            t.make_model = _with_timeout(t.make_model, 1.0)
        outs = run_tasks(tasks, tmp_path / "faulty", show_progress=False)
        assert all(o.complete for o in outs), [(o.error, o.failed_rows) for o in outs]
        faulted = [k for k, n in srv.received.items() if n > 1]
        assert len(faulted) > 20  # the faults really happened, to about 30% of 120 distinct requests
        kinds_seen = {e["attempt"] for e in srv.log}
        assert max(kinds_seen) == 3
    assert files(tmp_path / "faulty") == files(tmp_path / "clean")
    assert metrics(tmp_path / "faulty") == metrics(tmp_path / "clean")


def _with_timeout(make, seconds: float):
    def build():
        model = make()
        model.timeout = seconds
        return model
    return build


def _refuse(question: str, fault: Fault):
    def plan(key, attempt, body):
        return fault if question in json.dumps(body.get("messages")) else None
    return plan


def test_a_row_that_always_gets_400_fails_alone_is_scored_wrong_and_retried_alone(tmp_path) -> None:
    work = tmp_path / "w"
    with StubServer(answer=lambda body: "The answer is B.",
                    faults=_refuse("Water boils", Fault("status", 400, message="context too long"))) as srv:
        cfg = write_config(tmp_path, "mcq_gen", API_MODEL.format(url=srv.url))
        with pytest.warns(PromptweaveWarning, match="1 row"):
            res = run(str(cfg), "-w", str(work))
        assert res.exit_code == ExitCode.FAILED_ROWS, res.output
        assert "partial" in res.output
        rows = [json.loads(x) for x in (work / "predictions" / "api" / "mcq-gen.jsonl").read_text().splitlines()]
        assert [r["index"] for r in rows] == [0, 1, 2, 3, 4]  # every row is there, in order
        bad = rows[1]
        assert bad["error"]["kind"] == "http_400" and bad["error"]["attempts"] == 1
        assert "context too long" in bad["error"]["message"] and bad["correct"] is False
        assert bad["prediction"] is None and bad["output"] is None
        assert [r["correct"] for r in rows] == [True, False, False, False, True]
        result = json.loads((work / "results" / "api" / "mcq-gen.json").read_text())
        assert result["failed_rows"] == 1 and result["on_row_error"] == "wrong"
        assert result["row_errors"] == {"http_400": 1}
        assert result["metrics"]["accuracy"] == pytest.approx(40.0)  # the failed row counts as wrong
        assert srv.received[next(k for k, n in srv.received.items() if k not in srv.answered)] == 1  # not retried

        srv.faults = None
        srv.log.clear()
        res = run(str(cfg), "-w", str(work))
        assert res.exit_code == ExitCode.OK, res.output
        assert len(srv.log) == 1 and "Water boils" in json.dumps(srv.log[0]["body"])  # only the failed row
    rows = [json.loads(x) for x in (work / "predictions" / "api" / "mcq-gen.jsonl").read_text().splitlines()]
    assert not any("error" in r for r in rows)
    result = json.loads((work / "results" / "api" / "mcq-gen.json").read_text())
    assert "failed_rows" not in result and result["metrics"]["accuracy"] == pytest.approx(60.0)


@pytest.mark.parametrize("mode, code, accuracy", [("skip", ExitCode.FAILED_ROWS, 50.0),
                                                  ("fail", ExitCode.FAILURES, 50.0)])
def test_on_row_error_skip_and_fail(tmp_path, mode, code, accuracy) -> None:
    work = tmp_path / "w"
    with StubServer(answer=lambda body: "The answer is B.",
                    faults=_refuse("Water boils", Fault("status", 422, message="bad request"))) as srv:
        cfg = write_config(tmp_path, "mcq_gen", API_MODEL.format(url=srv.url))
        res = run(str(cfg), "-w", str(work), "--on-row-error", mode)
    assert res.exit_code == code, res.output
    rows = [json.loads(x) for x in (work / "predictions" / "api" / "mcq-gen.jsonl").read_text().splitlines()]
    assert len(rows) == 5 and rows[1]["correct"] is None and rows[1]["error"]["kind"] == "http_422"
    result = json.loads((work / "results" / "api" / "mcq-gen.json").read_text())
    assert result["metrics"]["accuracy"] == pytest.approx(accuracy)  # over the 4 answered rows
    assert result["status"] == ("failed" if mode == "fail" else "partial")  # never "done" with failed rows


def test_bad_on_row_error_is_a_usage_error(tmp_path) -> None:
    res = run(str(tmp_path / "x.py"), "--on-row-error", "maybe")
    assert res.exit_code == ExitCode.BAD_INPUT


@pytest.mark.parametrize("fault", MALFORMED_200, ids=lambda f: f.body[:20])
def test_malformed_200_is_retried_then_recorded_with_kind_and_attempts(tmp_path, fault) -> None:
    def plan(key, attempt, body):  # item 2 is malformed every time; the others once
        msgs = json.dumps(body.get("messages"))
        if "Question 2:" in msgs or attempt == 1:
            return fault
        return None

    with StubServer(faults=plan) as srv:
        tasks = toy_tasks(srv.url, concurrency=4, n_gen=6, max_retries=2)[:1]
        out, = run_tasks(tasks, tmp_path, show_progress=False)
    assert out.ok and out.failed_rows == 1
    rows = [json.loads(x) for x in (tmp_path / "predictions" / "stub-model" / "toy-gen.jsonl").read_text()
            .splitlines()]
    assert [("error" in r) for r in rows] == [False, False, True, False, False, False]
    assert rows[2]["error"]["kind"] == "malformed" and rows[2]["error"]["attempts"] == 3
    assert "HTTP 200" in rows[2]["error"]["message"]


def test_ppl_row_with_an_unscorable_label_fails_alone(tmp_path) -> None:
    def plan(key, attempt, body):
        return MALFORMED_200[1] if body.get("prompt", "").endswith("item 1 C") else None

    with StubServer(faults=plan) as srv:
        out = run_tasks(toy_tasks(srv.url, concurrency=4, n_ppl=3, max_retries=1)[1:], tmp_path,
                        show_progress=False)[0]
    assert out.ok and out.failed_rows == 1
    rows = [json.loads(x) for x in (tmp_path / "predictions" / "stub-model" / "toy-ppl.jsonl").read_text()
            .splitlines()]
    assert [r.get("error", {}).get("kind") for r in rows] == [None, "malformed", None]
    assert rows[1]["prediction"] is None and rows[0]["prediction"] in "ABCD"


def test_rows_stream_in_batches_with_the_same_file(tmp_path) -> None:
    from promptweave.infer import ResponseCache
    from promptweave.run import execute_task

    with StubServer() as srv:
        gen, ppl = toy_tasks(srv.url, concurrency=4, n_gen=23, n_ppl=7)
        model = gen.make_model()
        outs = {}
        for size in (1000, 3):
            work = tmp_path / str(size)
            with ResponseCache(work / "cache.sqlite") as cache:
                outs[size] = [execute_task(t, model, work, cache, rows_per_batch=size) for t in (gen, ppl)]
        assert files(tmp_path / "3") == files(tmp_path / "1000")
        assert metrics(tmp_path / "3") == metrics(tmp_path / "1000")
        assert not list((tmp_path / "3").rglob("*.partial"))
