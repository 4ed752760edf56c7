"""OpenCompass's shipped PromptBench MATH config (``AttackInferencer``) end to end: its ten prompts each scored on
stand-in MATH data with MATHEvaluator, ranked, and the ranking checked against accuracies computed here. The
stand-in model answers right only under some prompts (by the prompt's first word)."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.e2e.harness import MARK, missing_eval_names, result, run_config

PROBLEMS = [("[q0] 1+1", "It is $\\boxed{2}$."), ("[q1] 2+2", "So $\\boxed{4}$"), ("[q2] 3*3", "$\\boxed{9}$")]
ANSWERS = ["2", "4", "9"]
# the first word of each shipped prompt -> the rows the model gets right under it
RIGHT_UNDER = {"Solve": {0, 1, 2}, "Determine": {0}, "Calculate": {0, 1}, "Compute": {2}}


def shipped_prompts(config: str = "promptbench/promptbench_math_gen_abf776.py") -> list[str]:
    """The config's ``original_prompt_list``, read from its file with a literal evaluation."""
    root = Path(importlib.util.find_spec("opencompass").submodule_search_locations[0])
    tree = ast.parse((root / "configs" / "datasets" / config).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "original_prompt_list":
            return list(ast.literal_eval(node.value))
    raise LookupError(f"{config} has no original_prompt_list")


def answer(body: dict) -> str:
    text = body["messages"][-1]["content"]
    n = int(MARK.findall(text)[-1])
    ok = n in RIGHT_UNDER.get(text.split()[0], set())
    return f"The answer is $\\boxed{{{ANSWERS[n] if ok else 0}}}$"


def test_promptbench_math_ranks_every_prompt(tmp_path, cache):
    missing = missing_eval_names(("MATHEvaluator",), ("math_postprocess",))
    assert not missing, "evaluators / postprocessors that no longer build: " + ", ".join(missing)
    layouts.math(cache, PROBLEMS)
    with StubServer(answer=answer) as server:
        res, work = run_config(tmp_path, server.url, "promptbench.promptbench_math_gen_abf776", "math_datasets")
        sent = [e["body"]["messages"][-1]["content"] for e in server.log]
    assert res.exit_code == 0, res.output
    prompts = shipped_prompts()
    assert len(sent) == len(prompts) * len(PROBLEMS)
    assert set(sent) == {f"{p} {q}:" for p in prompts for q, _ in PROBLEMS}
    acc = [len(RIGHT_UNDER.get(p.split()[0], set())) / len(PROBLEMS) for p in prompts]
    order = sorted(range(len(prompts)), key=lambda k: acc[k], reverse=True)
    sel = result(work, "math")["prompt_selection"]
    assert [p["prompt_id"] for p in sel["prompts"]] == order
    assert [p["score"] for p in sel["prompts"]] == pytest.approx([acc[k] for k in order])
    assert result(work, "math")["metrics"]["accuracy"] == pytest.approx(100.0)
