"""GPQA (diamond) end to end: the ``./data/gpqa/`` path found under the data cache, the correct answer rotated
through A-D by the loader, first_option_postprocess, GPQAEvaluator."""
from __future__ import annotations

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.e2e.harness import by_marker, missing_eval_names, result, run_config


def test_gpqa_diamond_gen(tmp_path, monkeypatch):
    missing = missing_eval_names(("GPQAEvaluator",), ("first_option_postprocess",))
    assert not missing, "evaluators / postprocessors that no longer build: " + ", ".join(missing)
    cache = tmp_path / "cache"
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    n = 5
    layouts.gpqa(cache, "gpqa_diamond.csv", [(f"[q{i}] Which?", f"right{i}", "w1", "w2", "w3") for i in range(n)])
    # where the loader puts the right answer: rotation pattern (i + 1) % 4 of ABCD, BCDA, CDAB, DABC
    where = {1: "D", 2: "C", 3: "B", 0: "A"}
    gold = [where[(i + 1) % 4] for i in range(n)]
    said = [gold[0], gold[1], "A" if gold[2] != "A" else "B", gold[3], "B" if gold[4] != "B" else "C"]
    replies = {i: f"The correct answer is ({s})" for i, s in enumerate(said)}
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, "gpqa.gpqa_gen_4baadb", "gpqa_datasets")
    assert res.exit_code == 0, res.output
    assert result(work, "GPQA_diamond")["metrics"]["accuracy"] == pytest.approx(100 * 3 / n)
