"""MBPP+ end to end: the shipped ``mbpp_plus_gen_0b836a`` config, its rows under the data cache
(``data/mbpp_plus/mbpp_plus.jsonl``), EvalPlus's problems in the evalplus cache folder, answers from the loopback
server; the figure checked against the verdicts computed in-process in tests/evaluate/mbpp_plus_data.py."""
from __future__ import annotations

import pytest
from openai_stub import StubServer

from tests.codebox import CODE_EXEC
from tests.data import layouts
from tests.e2e.harness import by_marker, predictions, result, run_config
from tests.evaluate.mbpp_plus_data import ANSWERS, PROBLEMS, expected_pass_at_1, expected_status, write_evalplus_file


@pytest.mark.parametrize("config", ["mbpp_plus_gen_0b836a", "mbpp_plus_0shot_new_gen"])
def test_mbpp_plus_gen(tmp_path, cache, monkeypatch, config) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("MBPP_OVERRIDE_PATH", raising=False)
    write_evalplus_file(tmp_path / "xdg" / "evalplus")
    ids = list(ANSWERS)
    # the reference's rows: task_id (the output column), text and test_list (the prompt's columns)
    layouts.plain_jsonl(cache, "data/mbpp_plus/mbpp_plus.jsonl", [
        {"task_id": t, "text": f"[q{i}] Write {p['entry_point']}.", "code": p["canonical_solution"],
         "test_list": [f"assert {p['entry_point']} is not None"]}
        for i, (t, p) in enumerate((p["task_id"], p) for p in PROBLEMS)])
    replies = {i: f"[BEGIN]\n '{ANSWERS[t]}' \n[DONE]" for i, t in enumerate(ids)}
    replies[1] = f"Here it is:\n```python\n{ANSWERS[ids[1]]}```"  # a fenced block is extracted too
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, f"mbpp_plus.{config}", "mbpp_plus_datasets",
                               extra=CODE_EXEC)
    assert res.exit_code == 0, res.output
    got = result(work, "mbpp_plus")
    assert got["metrics"]["mbpp_plus_pass@1"] == pytest.approx(expected_pass_at_1(ANSWERS))
    by_id = {p["task_id"]: p for p in PROBLEMS}
    rows = predictions(work, "mbpp_plus")
    assert [r["gold"] for r in rows] == ids
    for r, t in zip(rows, ids):
        assert r["correct"] == (expected_status(by_id[t], ANSWERS[t], "plus") == "pass"), t


def test_mbpp_plus_without_the_flag_sends_nothing(tmp_path, cache) -> None:
    layouts.plain_jsonl(cache, "data/mbpp_plus/mbpp_plus.jsonl", [{"task_id": "Mbpp/2", "text": "[q0]",
                                                                    "test_list": ["assert True"]}])
    calls = []
    with StubServer(answer=lambda body: calls.append(body) or "x") as server:
        res, _ = run_config(tmp_path, server.url, "mbpp_plus.mbpp_plus_gen_0b836a", "mbpp_plus_datasets")
    assert res.exit_code != 0 and "PW630" in res.output and "--allow-code-exec" in res.output
    assert calls == []
