"""HumanEval end to end: the problems JSONL found under the data cache, the model's code block taken by
humaneval_postprocess_v2, each program run in the code sandbox (``--allow-code-exec``)."""
from __future__ import annotations

import pytest
from openai_stub import StubServer

from tests.codebox import CODE_EXEC
from tests.data import layouts
from tests.e2e.harness import by_marker, missing_eval_names, result, run_config

PROBLEMS = [("add", "a, b", "assert candidate(1, 2) == 3"), ("neg", "x", "assert candidate(4) == -4"),
            ("twice", "s", "assert candidate('ab') == 'abab'")]


def test_humaneval_gen(tmp_path, monkeypatch):
    missing = missing_eval_names(("HumanEvalEvaluator",), ("humaneval_postprocess_v2",))
    if missing:
        pytest.skip("not implemented in this build: " + ", ".join(missing))
    cache = tmp_path / "cache"
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    layouts.plain_jsonl(cache, "data/humaneval/human-eval-v2-20210705.jsonl", [
        {"task_id": f"HumanEval/{i}", "prompt": f'def {name}({args}):\n    """[q{i}] {name}"""\n',
         "canonical_solution": "    pass\n", "test": f"def check(candidate):\n    {test}\n", "entry_point": name}
        for i, (name, args, test) in enumerate(PROBLEMS)])
    # humaneval_postprocess_v2 strips the block's leading whitespace, so a bare indented body would lose its first
    # indent: replies give whole functions, which replace the prompt's stub when the program runs
    replies = {0: "```python\ndef add(a, b):\n    return a + b\n```", 1: "Sure:\n```python\ndef neg(x):\n    return x\n```",
               2: "```python\ndef twice(s):\n    return s * 2\n```"}
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, "humaneval.humaneval_gen_8e312c", "humaneval_datasets",
                               extra=CODE_EXEC)
    assert res.exit_code == 0, res.output
    # add and twice pass, neg returns x (fails)
    assert result(work, "openai_humaneval")["metrics"]["humaneval_pass@1"] == pytest.approx(100 * 2 / 3)
