"""A shipped AISBench dataset config end to end: ``ais_bench/datasets/...`` found from the working directory (an
AISBench checkout's root), ARC's AISBench folder layout (Dev / Test files), last_option_postprocess."""
from __future__ import annotations

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.e2e.harness import AISBENCH, by_marker, result, run_config


def test_aisbench_arc_c_gen(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AIS_BENCH_DATASETS_CACHE", raising=False)
    gold = ["B", "D", "A", "C"]
    said = ["B", "D", "C", "C"]
    folder = "ais_bench/datasets/ARC/ARC-c"
    layouts.arc(tmp_path, f"{folder}/ARC-Challenge-Dev.jsonl", [("[q90] dev", list("wxyz"), "A")])
    layouts.arc(tmp_path, f"{folder}/ARC-Challenge-Test.jsonl",
                [(f"[q{i}] Which?", list("wxyz"), g) for i, g in enumerate(gold)])
    # the model names its choice last, after mentioning another letter: last_option_postprocess takes the last
    replies = {i: f"Not A. The answer is {s}" for i, s in enumerate(said)}
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, "ARC_c.ARC_c_gen_0_shot_chat_prompt", "ARC_c_datasets",
                               package=AISBENCH)
    assert res.exit_code == 0, res.output
    expected = 100 * sum(g == s for g, s in zip(gold, said, strict=True)) / len(gold)
    assert result(work, "ARC-c")["metrics"]["accuracy"] == pytest.approx(expected)
