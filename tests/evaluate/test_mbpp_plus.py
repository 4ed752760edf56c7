"""MBPPEvaluator(metric='MBPPPlus'): EvalPlus's base and plus tests run in the code sandbox; verdicts and the
figure checked against an in-process computation of the same rules (tests/evaluate/mbpp_plus_data.py)."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.errors import CodeExecutionError, DataNotFoundError
from promptweave.evaluate import build_evaluation
from promptweave.evaluate.context import EvalContext
from promptweave.suites.mbpp_plus import MBPPPlusEvaluator, task_key
from tests.codebox import CODE_SANDBOX
from tests.evaluate.mbpp_plus_data import ANSWERS, PROBLEMS, expected_pass_at_1, expected_status, write_evalplus_file

CFG = {"evaluator": {"type": "MBPPEvaluator", "metric": "MBPPPlus"}}


@pytest.fixture
def evalplus_cache(tmp_path, monkeypatch):
    """An evalplus cache folder holding the stand-in MBPP+ file (as evalplus leaves it after its download)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("MBPP_OVERRIDE_PATH", raising=False)
    return write_evalplus_file(tmp_path / "xdg" / "evalplus")


def _wrap(code: str) -> str:
    return f"[BEGIN]\n '{code}' \n[DONE]"


def _score(ids, preds, rows=None):
    ev = build_evaluation(CFG, allow_code=False).evaluator
    assert isinstance(ev, MBPPPlusEvaluator)
    return ev.score(preds, ids, EvalContext(rows=rows or [{} for _ in ids], allow_code_exec=True, code_sandbox=CODE_SANDBOX))


def test_base_and_plus_verdicts_and_the_reference_figure(evalplus_cache) -> None:
    ids = list(ANSWERS)
    scores = _score(ids, [_wrap(ANSWERS[t]) for t in ids])
    by_id = {p["task_id"]: p for p in PROBLEMS}
    for t, d in zip(ids, scores.details):
        assert d["base_status"] == expected_status(by_id[t], ANSWERS[t], "base"), t
        assert d["plus_status"] == expected_status(by_id[t], ANSWERS[t], "plus"), t
    assert [d["base_status"] for d in scores.details] == ["pass", "pass", "pass", "fail", "pass"]
    assert [d["plus_status"] for d in scores.details] == ["pass", "fail", "pass", "pass", "fail"]
    # as OpenCompass counts: the plus status alone (Mbpp/5 fails its base tests and still counts)
    assert scores.metrics == {"mbpp_plus_pass@1": pytest.approx(expected_pass_at_1(ANSWERS))}
    assert scores.metrics["mbpp_plus_pass@1"] == pytest.approx(60.0)
    assert scores.correct == [True, False, True, True, False]


def test_the_first_answer_of_a_task_counts_and_ids_are_normalised(evalplus_cache) -> None:
    wrong = "def double(x):\n    return x\n"
    scores = _score([5, "5", "Mbpp/2"], [_wrap(wrong), _wrap(ANSWERS["Mbpp/5"]), _wrap(ANSWERS["Mbpp/2"])])
    assert scores.metrics["mbpp_plus_pass@1"] == pytest.approx(50.0)  # Mbpp/5's first answer is wrong
    assert scores.correct == [False, True, True]


def test_unloadable_or_missing_entry_point_fails(evalplus_cache) -> None:
    scores = _score(["Mbpp/5", "Mbpp/5"], ["def double(x) return", _wrap("def triple(x):\n    return 3 * x")])
    assert [d["plus_status"] for d in scores.details] == ["fail", "fail"]
    assert scores.metrics["mbpp_plus_pass@1"] == 0.0


def test_problems_in_the_rows_need_no_data_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    monkeypatch.delenv("MBPP_OVERRIDE_PATH", raising=False)
    row = dict(PROBLEMS[3], text="double it", test_list=["assert double(1) == 2"])
    scores = _score(["Mbpp/5"], [_wrap("def double(x):\n    return x + x")], rows=[row])
    assert scores.details[0]["base_status"] == "pass" and scores.metrics["mbpp_plus_pass@1"] == 100.0


def test_override_path_is_read_first(tmp_path, monkeypatch) -> None:
    other = [dict(PROBLEMS[3], plus_input=[[5], [7], [-3]])]
    path = write_evalplus_file(tmp_path / "override", other)
    monkeypatch.setenv("MBPP_OVERRIDE_PATH", str(path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    scores = _score(["Mbpp/5"], [_wrap(ANSWERS["Mbpp/5"])])
    assert scores.details[0]["plus_status"] == "fail"  # -3 is in the override's plus tests only


def test_missing_data_is_one_typed_error_naming_where_it_looked(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "nothing"))
    monkeypatch.setenv("MBPP_OVERRIDE_PATH", str(tmp_path / "missing.jsonl"))
    with pytest.raises(DataNotFoundError) as err:
        _score(["Mbpp/2"], [_wrap(ANSWERS["Mbpp/2"])])
    text = str(err.value)
    assert "[PW210]" in text and str(tmp_path / "nothing" / "evalplus") in text and "missing.jsonl" in text
    assert "downloads nothing" in text


def test_unknown_tasks_only_is_an_error(evalplus_cache) -> None:
    with pytest.raises(CodeExecutionError, match="no task"):
        _score(["Mbpp/999"], ["x"])


def test_needs_the_code_flag(evalplus_cache) -> None:
    ev = build_evaluation(CFG).evaluator
    with pytest.raises(CodeExecutionError, match="--allow-code-exec"):
        ev.score(["x"], ["Mbpp/2"], EvalContext(rows=[{}]))


def test_metric_names_are_checked() -> None:
    from promptweave.errors import EvaluationError

    with pytest.raises(EvaluationError, match="'MBPP' or 'MBPPPlus'"):
        build_evaluation({"evaluator": {"type": "MBPPEvaluator", "metric": "HumanEval"}})
    plain = build_evaluation({"evaluator": {"type": "MBPPEvaluator"}}).evaluator
    assert not isinstance(plain, MBPPPlusEvaluator) and plain.name == "MBPPEvaluator"


@settings(max_examples=50, deadline=None)
@given(st.one_of(st.integers(min_value=0, max_value=10**6), st.from_regex(r"[A-Za-z]+/[0-9]{1,4}", fullmatch=True)))
def test_task_keys(task_id) -> None:
    key = task_key(task_id)
    assert "/" in key and key.rsplit("/", 1)[-1] == str(task_id).rsplit("/", 1)[-1]
    assert task_key(key) == key


def test_data_file_lines_are_problems(tmp_path) -> None:
    from promptweave.suites.mbpp_plus import load_problems

    p = tmp_path / "MbppPlus.jsonl"
    p.write_text(json.dumps({"task_id": "Mbpp/7", "x": 1}) + "\n\n" + json.dumps({"task_id": 8}) + "\n")
    assert sorted(load_problems(p)) == ["Mbpp/7", "Mbpp/8"]
    p.write_text("{not json\n")
    with pytest.raises(DataNotFoundError, match="line 1"):
        load_problems(p)


def test_a_wrong_answer_cannot_report_its_own_pass(evalplus_cache) -> None:
    # the answer's process is not where the checker runs: records written anywhere, an early exit, patched
    # builtins or a reference solution overwritten in its own namespace change nothing
    forged = ("import builtins, os, importlib, posix\nimportlib.reload(posix)\n"
              "builtins.AssertionError = KeyError\nfor fd in range(64):\n    try:\n"
              "        posix.write(fd, b'{\"done\": 1}\\n')\n    except OSError:\n        pass\n"
              "def double(x):\n    return x\n")
    leave = forged + "posix._exit(0)\n"
    scores = _score(["Mbpp/5", "Mbpp/5"], [forged, leave])
    assert [d["plus_status"] for d in scores.details] == ["fail", "fail"]
    assert scores.correct == [False, False]
