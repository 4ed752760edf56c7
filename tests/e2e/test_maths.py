"""Maths OpenCompass configs end to end: GSM8K (4-shot chat prompt, ``#### N`` answers with thousands separators)
and MATH (boxed answers)."""
from __future__ import annotations

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.e2e.harness import (
    by_marker,
    missing_eval_names,
    predictions,
    result,
    run_config,
)


def _needs(*names: str, post: tuple[str, ...] = ()) -> None:
    missing = missing_eval_names(names, post)
    if missing:
        pytest.skip("not implemented in this build: " + ", ".join(missing))


def test_gsm8k_gen(tmp_path, cache):
    _needs("Gsm8kEvaluator", post=("gsm8k_postprocess", "gsm8k_dataset_postprocess"))
    gold = ["42", "1,000", "7", "13"]
    replies = {0: "6 * 7 = 42.\nThe answer is 42", 1: "So 1000 items.\nThe answer is 1000",
               2: "The answer is 8", 3: "I cannot tell."}
    correct = [True, True, False, False]  # 1,000 == 1000 once the dataset postprocessor drops the comma
    layouts.gsm8k(cache, [(f"[q{i}] How many?", f"Work.\n#### {g}") for i, g in enumerate(gold)])
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, "gsm8k.gsm8k_gen_1d7fe4", "gsm8k_datasets")
    assert res.exit_code == 0, res.output
    assert result(work, "gsm8k")["metrics"]["accuracy"] == pytest.approx(100 * sum(correct) / len(correct))
    first = str(predictions(work, "gsm8k")[0])
    assert "The answer is 4" in first and "[q0] How many?" in first  # the four worked examples, then the row


def test_math_gen(tmp_path, cache):
    _needs("MATHEvaluator", post=("math_postprocess_v2",))
    problems = [("[q0] 1+1?", "It is $\\boxed{2}$."), ("[q1] Half of 1?", "So $\\boxed{\\frac{1}{2}}$"),
                ("[q2] 3*3?", "$\\boxed{9}$")]
    replies = {0: "The sum is $\\boxed{2}$.", 1: "The answer is $\\boxed{\\frac{1}{2}}$", 2: "I get $\\boxed{6}$"}
    layouts.math(cache, problems)
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, "math.math_gen_265cce", "math_datasets")
    assert res.exit_code == 0, res.output
    assert result(work, "math")["metrics"]["accuracy"] == pytest.approx(100 * 2 / 3)
