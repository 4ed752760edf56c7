from __future__ import annotations

import pytest

from promptweave.errors import EvaluationError
from promptweave.evaluate import build_evaluation
from promptweave.evaluate.postprocess import (
    first_capital_postprocess,
    first_number_postprocess,
    first_option_postprocess,
    general_postprocess,
    last_number_postprocess,
    regex_postprocess,
)


@pytest.mark.parametrize("text,want", [
    ("The answer is (C).", "C"),
    ("answer: b", ""),  # only upper-case options count
    ("B. Paris is correct", "B"),
    ("I think it is D because A is wrong", "D"),
    ("答案是A", "A"),
    ("Both options are bad, pick (B)", "B"),
    ("nothing here", ""),
])
def test_first_option(text: str, want: str) -> None:
    assert first_option_postprocess(text, "ABCD") == want


def test_first_option_respects_the_option_set() -> None:
    assert first_option_postprocess("E is right, A is not", "ABCDE") == "E"
    assert first_option_postprocess("E is right, A is not", "ABCD") == "A"


def test_numbers_capitals_regex_general() -> None:
    assert first_capital_postprocess("so, Beta") == "B"
    assert first_number_postprocess("costs 1,234.50 or -3") == 1.0  # the reference: a float, commas split numbers
    assert first_number_postprocess("no digits") is None
    assert last_number_postprocess("costs 1,234.50 or -3") == "-3"
    assert last_number_postprocess("none") == ""
    assert regex_postprocess("#### 42 done", r"####\s*(\d+)") == "42"
    assert regex_postprocess("x", r"(\d+)") == ""
    assert general_postprocess("The Eiffel Tower, in Paris.") == "Eiffel Tower"


def test_eval_cfg_with_opencompass_names() -> None:
    ev = build_evaluation({"evaluator": {"type": "opencompass.openicl.icl_evaluator.AccEvaluator"},
                           "pred_postprocessor": {"type": "first_option_postprocess", "options": "ABCD"},
                           "pred_role": "BOT"})
    preds = [ev.process_prediction(t) for t in ["The answer is B", "A", "no idea"]]
    s = ev.score(preds, ["B", "C", "A"])
    assert preds == ["B", "A", ""]
    assert s.correct == [True, False, False]
    assert s.metrics["accuracy"] == pytest.approx(100 / 3)


def test_eval_cfg_accepts_callables_by_name() -> None:
    def first_capital_postprocess(text):  # stands for the object a .py config imports from OpenCompass
        raise AssertionError("never called: ours runs instead")

    class EMEvaluator:
        pass

    ev = build_evaluation({"evaluator": {"type": EMEvaluator}, "pred_postprocessor": first_capital_postprocess})
    assert ev.process_prediction("so, Beta") == "B"
    s = ev.score(["the Paris.", "Rome"], [["Paris", "paris france"], "Milan"])
    assert s.correct == [True, False] and s.metrics["score"] == 50.0


def test_unknown_names_are_typed_errors() -> None:
    with pytest.raises(EvaluationError, match="unknown evaluator") as ei:
        build_evaluation({"evaluator": {"type": "BLEUishEvaluator"}})
    assert ei.value.field == "eval_cfg.evaluator.type" and ei.value.code == "PW600"
    assert "BLEUishEvaluator" in str(ei.value)
    with pytest.raises(EvaluationError, match="unknown postprocessor"):
        build_evaluation({"pred_postprocessor": {"type": "mystery"}})


def test_user_callables_run_only_when_opted_in() -> None:
    def shout(text):
        return text.upper()

    with pytest.raises(EvaluationError, match="trust-config"):
        build_evaluation({"pred_postprocessor": {"type": shout}})
    ev = build_evaluation({"pred_postprocessor": {"type": shout}}, allow_code=True)
    assert ev.process_prediction("a") == "A"


def test_ppl_mode_defaults_to_label_accuracy() -> None:
    ev = build_evaluation(None, mode="ppl")
    assert type(ev.evaluator).__name__ == "PPLAccEvaluator"
    assert ev.score(["A", 1], ["A", "1"]).correct == [True, True]


def test_model_postprocessor_runs_before_the_datasets() -> None:
    ev = build_evaluation({"pred_postprocessor": {"type": "first_capital_postprocess"}},
                          model_cfg={"abbr": "r1", "pred_postprocessor": {"type": "extract_non_reasoning_content"}})
    assert ev.process_prediction("<think>Maybe A</think> so: B") == "B"
