"""BBH end to end (0-shot, no CoT): a multiple-choice task (bbh_mcq_postprocess on both sides) and a free-form
one, each from ``<data>/BBH/data/<task>.json``."""
from __future__ import annotations

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.e2e.harness import by_marker, missing_eval_names, result, run_config


def test_bbh_0shot_gen_mcq_and_free_form(tmp_path, monkeypatch):
    missing = missing_eval_names(("BBHEvaluator", "BBHEvaluator_mcq"), ("bbh_mcq_postprocess",))
    assert not missing, "evaluators / postprocessors that no longer build: " + ", ".join(missing)
    cache = tmp_path / "cache"
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    layouts.bbh(cache, "temporal_sequences", [("[q0] When? Options: (A) 5am (B) 6am", "(A)"),
                                              ("[q1] When? Options: (A) 1pm (B) 2pm", "(B)"),
                                              ("[q2] When? Options: (A) 3pm (B) 4pm", "(A)")])
    layouts.bbh(cache, "navigate", [("[q10] Do you return? Options: - Yes - No", "Yes"),
                                    ("[q11] Do you return? Options: - Yes - No", "No")])
    replies = {0: "So the answer is (A).", 1: "So the answer is (A).", 2: "So the answer is (A).",
               10: "So the answer is Yes.", 11: "So the answer is Yes."}
    select = "[d for d in bbh_datasets if d['abbr'] in ('bbh-temporal_sequences', 'bbh-navigate')]"
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, "bbh.bbh_0shot_nocot_gen_925fc4", "bbh_datasets", select)
    assert res.exit_code == 0, res.output
    assert result(work, "bbh-temporal_sequences")["metrics"]["score"] == pytest.approx(100 * 2 / 3)
    assert result(work, "bbh-navigate")["metrics"]["score"] == pytest.approx(50.0)
