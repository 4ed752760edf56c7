"""The code sandbox: model code runs only with --allow-code-exec, in a limited subprocess; escapes fail."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.errors import CodeExecutionError
from promptweave.evaluate import EvalContext, build_evaluation
from promptweave.evaluate.code_exec import Limits, run_program
from promptweave.suites.code.humaneval import HumanEvalEvaluator
from promptweave.suites.code.mbpp import MBPPEvaluator, mbpp_answer
from tests.codebox import CODE_EXEC, CODE_SANDBOX

FAST = Limits(timeout_s=5.0, cpu_s=2, memory_mb=256)


def test_pass_wrong_and_failed() -> None:
    assert run_program("def f(x):\n    return x + 1\n", "assert f(1) == 2", FAST, CODE_SANDBOX) == "pass"
    assert run_program("def f(x):\n    return x\n", "assert f(1) == 2", FAST, CODE_SANDBOX) == "wrong_answer"
    assert run_program("def f(x) return", "", FAST, CODE_SANDBOX) == "failed"


def test_infinite_loop_is_stopped() -> None:
    assert run_program("while True:\n    pass\n", "", FAST, CODE_SANDBOX) in ("timeout", "failed")


def test_sleeping_forever_hits_the_wall_clock() -> None:
    assert run_program("import time\ntime.sleep(60)\n", "", Limits(timeout_s=1.0, cpu_s=1), CODE_SANDBOX) == "timeout"


def test_ten_gigabytes_are_refused() -> None:
    assert run_program("x = bytearray(10 * 1024 ** 3)\n", "", FAST, CODE_SANDBOX) == "failed"


def test_os_system_and_subprocess_fail(tmp_path) -> None:
    marker = tmp_path / "escaped"
    assert run_program(f"import os\nos.system('touch {marker}')\n", "", FAST, CODE_SANDBOX) == "failed"
    assert run_program(f"import subprocess\nsubprocess.run(['touch', '{marker}'])\n", "", FAST, CODE_SANDBOX) == "failed"
    assert not marker.exists()


def test_forged_eq_does_not_pass_type_aware_tests() -> None:
    ev = MBPPEvaluator()
    prog = "class Any:\n    def __eq__(self, o):\n        return True\ndef f():\n    return Any()\n"
    s = ev.score([f"[BEGIN] '{prog}' [DONE]"], ["assert f() == 3"], EvalContext(allow_code_exec=True, code_sandbox=CODE_SANDBOX))
    assert s.correct == [False] and s.metrics["wrong_answer"] == 1.0


def test_mbpp_scores_like_the_reference() -> None:
    ev = MBPPEvaluator()
    preds = ["[BEGIN]\n 'def add(a, b):\n    return a + b' \n[DONE]", "```python\ndef add(a, b):\n    return a - b\n```",
             "def add(a, b):\n    while True: pass"]
    tests = "assert add(1, 2) == 3\nassert add(0, 0) == 0"
    s = ev.score(preds, [tests] * 3, EvalContext(allow_code_exec=True, code_sandbox=CODE_SANDBOX))
    assert s.correct == [True, False, False]
    assert s.metrics["pass"] == 1.0 and s.metrics["wrong_answer"] == 1.0 and s.metrics["score"] == pytest.approx(100 / 3)
    assert mbpp_answer("[BEGIN] 'x = 1' [DONE]") == "x = 1"


def test_humaneval_pass_at_1() -> None:
    rows = [{"prompt": "def inc(x):\n", "test": "def check(f):\n    assert f(1) == 2\n", "entry_point": "inc"}] * 2
    s = HumanEvalEvaluator().score(["    return x + 1\n", "    return x\n"], ["HumanEval/0", "HumanEval/1"],
                                   EvalContext(rows=rows, allow_code_exec=True, code_sandbox=CODE_SANDBOX))
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
    from promptweave.suites.code.mbpp import MBPPPassKEvaluator

    good, bad = "def f():\n    return 1\n", "def f():\n    return 2\n"
    refs = [{"test_list_2": "assert f() == 1", "task_id": 1}, {"test_list_2": "assert f() == 1", "task_id": 2}]
    s = MBPPPassKEvaluator(k=(1, 2)).score([[good, bad], [bad, bad]], refs, EvalContext(allow_code_exec=True, code_sandbox=CODE_SANDBOX))
    # task 1: 1 of 2 pass -> pass@1 0.5, pass@2 1.0; task 2: 0 -> mean 25 / 50
    assert s.metrics["pass@1"] == pytest.approx(25.0) and s.metrics["pass@2"] == pytest.approx(50.0)
    assert s.metrics["pass"] == 1.0 and s.correct == [False, False]


@settings(max_examples=12, deadline=None)
@given(program=st.text(max_size=80) | st.sampled_from([
    "import os\nos._exit(0)", "import posix\nposix._exit(0)", "raise SystemExit(0)", "import sys\nsys.exit(0)",
    "print('x' * 10**6)", "import os\nos.write(1, b'0:0\\n')", "import signal, os\nos.kill(os.getpid(), 9)"]))
def test_any_program_gets_a_verdict(program: str) -> None:
    # a program that ends the process itself, or writes a fake verdict, cannot pass: the runner reports with a
    # per-run token on its own copy of stdout
    res = run_program(program, "assert False", FAST, CODE_SANDBOX)
    assert res in ("wrong_answer", "failed", "timeout")


MBPP_CONFIG = '''
mbpp = dict(
    abbr="mbpp", path="mbpp.jsonl",
    reader_cfg=dict(input_columns=["text"], output_column="test_list"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", prompt="{{text}}")])),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="GenInferencer", max_out_len=64)),
    eval_cfg=dict(evaluator=dict(type="MBPPEvaluator")),
)
datasets = [mbpp]
models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
               batch_size=2, backoff_base=0,
               meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                         dict(role="BOT", api_role="BOT", generate=True)]))]
'''


def test_run_cli_refuses_code_without_the_flag_then_scores_with_it(stub_server, tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from promptweave.cli.app import app

    rows = [{"text": "add", "test_list": "assert add(1, 2) == 3"}, {"text": "sub", "test_list": "assert sub(3, 1) == 2"}]
    (tmp_path / "mbpp.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "c.py"
    cfg.write_text(MBPP_CONFIG.format(url=stub_server.url))
    stub_server.answer = lambda body: {"add": "[BEGIN] 'def add(a, b):\n    return a + b' [DONE]",
                                       "sub": "[BEGIN] 'import os\nos.system(\"true\")\ndef sub(a, b):\n"
                                              "    return a - b' [DONE]"}[body["messages"][-1]["content"]]
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress", "--no-report"])
    assert res.exit_code != 0 and "PW630" in res.output and "--allow-code-exec" in res.output
    assert f"{cfg}: datasets[0].eval_cfg.evaluator.type" in res.output.replace("\n", "")
    assert stub_server.total_received == 0
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress", "--no-report",
                                   *CODE_EXEC])
    assert res.exit_code == 0, res.output
    result = json.loads((tmp_path / "w" / "results" / "api" / "mbpp.json").read_text())
    # the os.system call fails its program: one pass, one failed
    assert result["metrics"] == {"pass": 1.0, "timeout": 0.0, "failed": 1.0, "wrong_answer": 0.0, "score": 50.0}


def test_lcbench_blocks_solution_class_and_pass_at_k() -> None:
    from promptweave.suites.code.lcbench import (
        LCEvaluator,
        LCPassKEvaluator,
        lc_code_blocks,
    )

    assert lc_code_blocks("'```python\\nx = 1\\n```'") == ["x = 1"]  # a quoted reply is unquoted first
    sol = "```python\nclass Solution:\n    def twoSum(self, a, b):\n        return a + b\n```"
    wrong = "```python\ndef twoSum(a, b):\n    return a - b\n```\n```python\ndef twoSum(a, b):\n    return a + b\n```"
    tests = "assert twoSum(1, 2) == 3"
    ctx = EvalContext(allow_code_exec=True, code_sandbox=CODE_SANDBOX)
    s = LCEvaluator().score([sol, wrong, "no code"], [{"test_list_2": tests, "task_id": 1}] * 3, ctx)
    # row 2 passes on its second block; row 3's text is run as code and fails
    assert s.correct == [True, True, False] and s.metrics["score"] == pytest.approx(200 / 3)
    assert s.metrics["failed"] == 1.0
    refs = [{"test_list_2": tests, "task_id": 7}]
    s = LCPassKEvaluator(k=(1, 2)).score([[sol, "nothing"]], refs, ctx)
    assert s.metrics["pass@1"] == 50.0 and s.metrics["pass@2"] == 100.0
