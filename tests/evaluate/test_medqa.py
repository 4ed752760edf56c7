"""MedMCQA / Medbullets / NEJM AI Bench scoring (suites/medqa.py) and their judge-output postprocessors.

The judge postprocessors' figures below are what OpenCompass 0.5.4's ``medmcqa_llmjudge_postprocess`` /
``medbullets_llmjudge_postprocess`` returned for the same verdicts and rows (run once in ``$PROMPTWEAVE_OC_FULL_VENV``, built by ``tools/build_reference_venvs.sh``
with a stand-in ``dataset.reader.dataset['test']``)."""
from __future__ import annotations

import importlib.util

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.compat.evaluators import EVALUATORS
from promptweave.errors import PromptweaveWarning
from promptweave.evaluate.context import EvalContext
from promptweave.evaluate.judge import DICT_POSTPROCESSORS
from promptweave.suites.medqa import first_option_letter


@pytest.mark.parametrize("reply, n, want", [
    ("The answer is B.", 4, "B"),
    ("A through D are wrong... C", 4, "C"),  # the phrase is dropped before the letter is looked for
    ("I understand. E", 4, None),  # E is no option of a four-option row
    ("I understand. E", 5, "E"),
    ("BCD", 4, None),  # no stand-alone letter
    (None, 4, None),
])
def test_first_option_letter(reply, n, want):
    assert first_option_letter(reply, n) == want


@given(st.text(max_size=60), st.integers(min_value=0, max_value=6))
def test_first_option_letter_is_an_option_or_none(reply, n):
    got = first_option_letter(reply, n)
    assert got is None or got in "ABCDEF"[:n]


def test_medmcqa_evaluator_scores_by_the_rows_options():
    ev = EVALUATORS["MedmcqaEvaluator"]()
    rows = [{"options": ["a", "b", "c", "d"], "subject_name": "S", "topic_name": "T", "choice_type": "single"}] * 3
    got = ev.score(["B", "it is E", "D."], ["B", "A", "C"], EvalContext(rows=rows))
    assert got.metrics["accuracy"] == pytest.approx(100 / 3)
    assert got.correct == [True, False, False]
    assert got.details[1]["pred"] == [] and got.details[0]["subject_name"] == "S"


def test_medmcqa_judge_postprocess_flattens_categories_last_column_wins():
    fn, _ = DICT_POSTPROCESSORS["medmcqa_llmjudge_postprocess"]
    rows = [{"subject_name": "Anatomy", "topic_name": "Bones", "choice_type": "single"},
            {"subject_name": "Anatomy", "topic_name": "single", "choice_type": "multi"},
            {"subject_name": "Surgery", "topic_name": "Bones", "choice_type": "single"}]
    metrics, grades, tag = fn(["A", "nothing", "B"], rows, ["x", "y", "z"])
    assert grades == ["A", "B", "B"] and tag == "A"
    assert metrics["accuracy"] == 33.33 and metrics["total_count"] == 3.0
    assert metrics["medmcqa-Anatomy"] == 50.0 and metrics["medmcqa-Bones"] == 50.0
    # "single" is both a topic (1 row, wrong) and a question type (2 rows, 1 right): the question type's figure
    assert metrics["medmcqa-single"] == 50.0


def test_medbullets_judge_postprocess():
    fn, _ = DICT_POSTPROCESSORS["medbullets_llmjudge_postprocess"]
    metrics, _, _ = fn(["A", "A", "B"], [{"question_type": "step1"}, {"question_type": "step1"},
                                         {"question_type": "step2&3"}], [])
    assert metrics["accuracy"] == 66.67
    assert metrics["Medbullets-step1"] == 100.0 and metrics["Medbullets-step2&3"] == 0.0


def test_musr_evaluator_reads_the_first_answer_line():
    ev = EVALUATORS["MusrEvaluator"]()
    got = ev.score(["x\nANSWER: 2\nANSWER: 1", "ANSWER: none", "no answer"], [2, 1, 1])
    assert got.correct == [True, False, False]


def test_livemathbench_with_a_judge_server_is_refused():
    from promptweave.errors import EvaluationError

    with pytest.raises(EvaluationError, match="judge"):
        EVALUATORS["LiveMathBenchEvaluator"](model_name="m", url=["http://127.0.0.1:1/v1"])
    got = EVALUATORS["LiveMathBenchEvaluator"](model_name="", url=[]).score(["\\boxed{\\frac12}", "\\boxed{3}"],
                                                                            ["\\frac{1}{2}", "4"])
    assert got.metrics["accuracy"] == 50.0


def test_livemathbench_with_a_judge_server_is_the_reference_class_where_installed(monkeypatch):
    # the shipped judge config lints as in OpenCompass where the reference is installed (its own class scores
    # it); with promptweave alone the native class refuses it, saying why
    pytest.importorskip("opencompass", reason="needs opencompass installed (--no-deps is enough)")
    from promptweave.errors import EvaluationError
    from promptweave.evaluate.bridged import BridgedEvaluator
    from promptweave.evaluate.config import build_evaluator

    cfg = {"type": "LiveMathBenchEvaluator", "model_name": "m", "url": ["http://127.0.0.1:1/v1"]}
    if importlib.util.find_spec("mmengine") is None:  # the reference installed --no-deps: lint says run cannot
        with pytest.warns(PromptweaveWarning, match="a package it imports is not installed here"):
            assert isinstance(build_evaluator(cfg, "eval_cfg.evaluator"), BridgedEvaluator)
    else:
        assert isinstance(build_evaluator(cfg, "eval_cfg.evaluator"), BridgedEvaluator)
    assert not isinstance(build_evaluator({"type": "LiveMathBenchEvaluator"}, "e"), BridgedEvaluator)
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    with pytest.raises(EvaluationError, match="judge"):
        build_evaluator(cfg, "eval_cfg.evaluator")
