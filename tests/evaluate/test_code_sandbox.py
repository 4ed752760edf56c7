"""The code sandbox: model code runs only with --allow-code-exec, in a limited subprocess; escapes fail."""
from __future__ import annotations

import pytest

from promptweave.errors import CodeExecutionError
from promptweave.evaluate import EvalContext, build_evaluation
from promptweave.evaluate.code_exec import (
    HumanEvalEvaluator,
    Limits,
    MBPPEvaluator,
    mbpp_answer,
    run_program,
)

FAST = Limits(timeout_s=5.0, cpu_s=2, memory_mb=256)


def test_pass_wrong_and_failed() -> None:
    assert run_program("def f(x):\n    return x + 1\n", "assert f(1) == 2", FAST) == "pass"
    assert run_program("def f(x):\n    return x\n", "assert f(1) == 2", FAST) == "wrong_answer"
    assert run_program("def f(x) return", "", FAST) == "failed"


def test_infinite_loop_is_stopped() -> None:
    assert run_program("while True:\n    pass\n", "", FAST) in ("timeout", "failed")


def test_sleeping_forever_hits_the_wall_clock() -> None:
    assert run_program("import time\ntime.sleep(60)\n", "", Limits(timeout_s=1.0, cpu_s=1)) == "timeout"


def test_ten_gigabytes_are_refused() -> None:
    assert run_program("x = bytearray(10 * 1024 ** 3)\n", "", FAST) == "failed"


def test_os_system_and_subprocess_fail(tmp_path) -> None:
    marker = tmp_path / "escaped"
    assert run_program(f"import os\nos.system('touch {marker}')\n", "", FAST) == "failed"
    assert run_program(f"import subprocess\nsubprocess.run(['touch', '{marker}'])\n", "", FAST) == "failed"
    assert not marker.exists()


def test_forged_eq_does_not_pass_type_aware_tests() -> None:
    ev = MBPPEvaluator()
    prog = "class Any:\n    def __eq__(self, o):\n        return True\ndef f():\n    return Any()\n"
    s = ev.score([f"[BEGIN] '{prog}' [DONE]"], ["assert f() == 3"], EvalContext(allow_code_exec=True))
    assert s.correct == [False] and s.metrics["wrong_answer"] == 1.0


def test_mbpp_scores_like_the_reference() -> None:
    ev = MBPPEvaluator()
    preds = ["[BEGIN]\n 'def add(a, b):\n    return a + b' \n[DONE]", "```python\ndef add(a, b):\n    return a - b\n```",
             "def add(a, b):\n    while True: pass"]
    tests = "assert add(1, 2) == 3\nassert add(0, 0) == 0"
    s = ev.score(preds, [tests] * 3, EvalContext(allow_code_exec=True))
    assert s.correct == [True, False, False]
    assert s.metrics["pass"] == 1.0 and s.metrics["wrong_answer"] == 1.0 and s.metrics["score"] == pytest.approx(100 / 3)
    assert mbpp_answer("[BEGIN] 'x = 1' [DONE]") == "x = 1"


def test_humaneval_pass_at_1() -> None:
    rows = [{"prompt": "def inc(x):\n", "test": "def check(f):\n    assert f(1) == 2\n", "entry_point": "inc"}] * 2
    s = HumanEvalEvaluator().score(["    return x + 1\n", "    return x\n"], ["HumanEval/0", "HumanEval/1"],
                                   EvalContext(rows=rows, allow_code_exec=True))
    assert s.metrics == {"humaneval_pass@1": 50.0} and s.correct == [True, False]


def test_refused_without_the_flag() -> None:
    ev = build_evaluation({"evaluator": {"type": "MBPPEvaluator"}}, where="datasets[1].eval_cfg")
    with pytest.raises(CodeExecutionError, match="--allow-code-exec") as ei:
        ev.check(allow_code_exec=False)
    assert ei.value.code == "PW630" and ei.value.field == "datasets[1].eval_cfg.evaluator.type"
    ev.check(allow_code_exec=True)
    with pytest.raises(CodeExecutionError, match="--allow-code-exec"):
        HumanEvalEvaluator().score(["x"], ["t"], EvalContext())


def test_mbpp_pass_at_k() -> None:
    from promptweave.evaluate.code_exec import MBPPPassKEvaluator

    good, bad = "def f():\n    return 1\n", "def f():\n    return 2\n"
    refs = [{"test_list_2": "assert f() == 1", "task_id": 1}, {"test_list_2": "assert f() == 1", "task_id": 2}]
    s = MBPPPassKEvaluator(k=(1, 2)).score([[good, bad], [bad, bad]], refs, EvalContext(allow_code_exec=True))
    # task 1: 1 of 2 pass -> pass@1 0.5, pass@2 1.0; task 2: 0 -> mean 25 / 50
    assert s.metrics["pass@1"] == pytest.approx(25.0) and s.metrics["pass@2"] == pytest.approx(50.0)
    assert s.metrics["pass"] == 1.0 and s.correct == [False, False]
