"""A run on the tiny local transformers model: gen and ppl tasks, files on disk, cache reuse."""
from __future__ import annotations

import json

import pytest

from promptweave.evaluate import build_evaluation
from promptweave.infer import Record
from promptweave.models.base import GenerationParams
from promptweave.models.hf import HFModel
from promptweave.run import Task, run_tasks


@pytest.fixture(scope="module")
def built(tiny_model_dir):
    made = []

    def make():
        m = HFModel(str(tiny_model_dir), device="cpu", dtype="float32", batch_size=4)
        made.append(m)
        return m

    return make, made


def tasks(make):
    gen = [Record(index=i, rendered=f"Question: {i}? Answer:", row={"a": "A"}) for i in range(6)]
    ppl = [Record(index=i, label=lab, rendered=f"Q: {i} Answer: {lab}", row={"a": "B"}, shot_ids=[])
           for i in range(3) for lab in "AB"]
    return [Task("g", "tiny", make, gen, "gen", GenerationParams(max_out_len=3),
                 build_evaluation({"pred_postprocessor": {"type": "strip"}}), gold_column="a"),
            Task("p", "tiny", make, ppl, "ppl", evaluation=build_evaluation(None, mode="ppl"), gold_column="a")]


def test_local_run_writes_predictions_and_reuses_cache(built, tmp_path) -> None:
    make, made = built
    outs = run_tasks(tasks(make), tmp_path, limit=2, show_progress=False)
    assert len(made) == 1  # one model instance for both datasets
    assert [o.rows for o in outs] == [2, 2] and all(o.ok for o in outs)
    preds = [json.loads(x) for x in (tmp_path / "predictions" / "tiny" / "p.jsonl").read_text().splitlines()]
    assert [p["index"] for p in preds] == [0, 1]
    assert set(preds[0]["output"]) == {"A", "B"} and preds[0]["prediction"] in ("A", "B")
    assert preds[0]["correct"] == (preds[0]["prediction"] == "B")
    res = json.loads((tmp_path / "results" / "tiny" / "p.json").read_text())
    assert res["status"] == "done" and "accuracy" in res["metrics"]

    run_tasks(tasks(make), tmp_path, limit=2, show_progress=False)
    assert made[1].stats.forward_calls == 0  # everything came from the cache
    run_tasks(tasks(make), tmp_path, show_progress=False)
    assert made[2].stats.forward_calls > 0  # the rows beyond the limit were new
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [s["rows"] for s in summary] == [6, 3]
