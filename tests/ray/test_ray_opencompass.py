"""Shipped OpenCompass eval configs through ``--executor ray`` (a Ray instance the tool starts itself) give the local
executor's results and send the same requests (stand-in data in the reference's layout, as tests/e2e does)."""
from __future__ import annotations

import importlib.util

import pytest
from openai_stub import StubServer
from ray_helpers import outputs
from typer.testing import CliRunner

from promptweave.cli.app import app
from tests.data import layouts
from tests.e2e.harness import by_marker, missing_eval_names

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("opencompass") is None,
                                 reason="needs the opencompass config tree: pip install --no-deps opencompass==0.5.4 "
                                        "(.ci/run does)")]

EVAL = '''from mmengine.config import read_base

with read_base():
    from opencompass.configs.datasets.gsm8k.gsm8k_gen_1d7fe4 import gsm8k_datasets
    from opencompass.configs.datasets.mmlu.mmlu_gen_4d595a import mmlu_datasets

datasets = gsm8k_datasets + mmlu_datasets[:2]
models = [
    dict(abbr="stub", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
         batch_size=4, max_out_len=256, backoff_base=0,
         meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                   dict(role="BOT", api_role="BOT", generate=True)])),
]
'''


def _mc_rows(start: int, n: int, gold: list[str]) -> list[list[str]]:
    return [[f"[q{start + i}] Question {start + i}?", "w", "x", "y", "z", gold[i % len(gold)]] for i in range(n)]


def test_opencompass_configs_on_ray_match_local(tmp_path, monkeypatch) -> None:
    missing = missing_eval_names(("Gsm8kEvaluator", "AccwithDetailsEvaluator"),
                                 ("gsm8k_postprocess", "gsm8k_dataset_postprocess", "first_option_postprocess"))
    assert not missing, "evaluators / postprocessors that no longer build: " + ", ".join(missing)
    cache = tmp_path / "cache"
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    # gsm8k: a 4-shot chat prompt; MMLU: FixK 5-shot examples from dev (retrieved once on the driver, shared)
    layouts.gsm8k(cache, [(f"[q{i}] How many?", f"Work.\n#### {g}") for i, g in enumerate(["42", "1,000", "7"])])
    replies = {0: "The answer is 42", 1: "The answer is 1000", 2: "I cannot tell."}
    for k, (name, gold, said) in enumerate((("college_biology", ["A", "B", "C", "D", "A"], "ABAAC"),
                                            ("college_chemistry", ["D", "D", "C"], "DxC"))):
        base = 100 * (k + 1)
        layouts.mmlu(cache, name, _mc_rows(base, len(gold), gold), dev=_mc_rows(base + 50, 5, ["B"]))
        replies.update({base + i: f"Answer: {s}" for i, s in enumerate(said)})
    with StubServer(answer=by_marker(replies)) as srv:
        cfg = tmp_path / "eval_oc.py"
        cfg.write_text(EVAL.replace("{url}", srv.url), encoding="utf-8")
        local = CliRunner().invoke(app, ["run", str(cfg), "-w", "local", "--no-progress"])
        assert local.exit_code == 0, local.output
        sent_local = srv.received.copy()
        srv.received.clear()
        ray_run = CliRunner().invoke(app, ["run", str(cfg), "-w", "ray", "--no-progress", "--executor", "ray",
                                           "--workers", "2", "--shard-rows", "2"])
        assert ray_run.exit_code == 0, ray_run.output
        sent_ray = srv.received.copy()
    got = outputs(tmp_path / "ray")
    assert got == outputs(tmp_path / "local")
    assert sorted(k for k in got if k.startswith("results/")) == [
        "results/stub/gsm8k.json", "results/stub/lukaemon_mmlu_college_biology.json",
        "results/stub/lukaemon_mmlu_college_chemistry.json"]
    assert sent_ray == sent_local and sum(sent_ray.values()) == 11  # the same requests, each once
    assert got["results/stub/gsm8k.json"]["metrics"]["accuracy"] == pytest.approx(200 / 3)
