"""GAOKAO-Bench objective questions: letters read per question type, points per blank (hand-worked)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.compat.evaluators import EVALUATORS
from promptweave.errors import EvaluationError
from promptweave.evaluate import build_evaluation
from promptweave.suites.gaokao import GaokaoBenchEvaluator, extract_answers


def ev(kind: str):
    return EVALUATORS[f"GaokaoBenchEvaluator_{kind}"]()


def test_single_choice_takes_the_last_letter() -> None:
    preds = ["【解析】A 不对，B 不对，所以选 C", "答案：D", "no letter here", ""]
    s = ev("single_choice").score(preds, [["C"], ["A"], ["B"], ["A"]])
    assert s.metrics == {"score": 25.0}
    assert s.correct == [True, False, False, False]
    assert s.details[2] == {"pred": ["Z"], "refr": ["B"], "is_correct": False}


def test_multi_choice_full_and_partial_credit() -> None:
    preds = ["【解析】……【答案】B C", "【解析】……【答案】BD", "【解析】……【答案】C", "分析很长……最后选AD"]
    golds = [["BC"], ["BC"], ["BC"], ["ABD"]]
    # 2 (exact) + 0 (D not in gold) + 1 (subset) + 1 (last 10 chars 'AD', a subset) = 4 of 8
    s = ev("multi_choice").score(preds, golds)
    assert s.metrics == {"score": 50.0}
    assert s.correct == [True, False, False, False]


def test_multi_choice_marker_at_the_very_start_is_not_taken() -> None:
    # the marker at index 0 is skipped (the reference tests > 0), so the last 10 characters are read instead
    assert extract_answers("【答案】A，其余的说明写在这里很长很长很长的B", "multi_choice") == ["B"]
    assert extract_answers("x【答案】A 很长很长很长很长很长的说明", "multi_choice") == ["A"]


def test_multi_question_choice_by_markers_or_first_capitals() -> None:
    assert extract_answers("(1)【答案】：A (2)【答案】 B", "multi_question_choice", 2) == ["A", "B"]
    assert extract_answers("I think A then C and B", "multi_question_choice", 2) == ["I", "A"]
    s = ev("multi_question_choice").score(["(1)【答案】A (2)【答案】C", "only A"], [["A", "B"], ["A", "B"]])
    # row 1: 1 of 2 blanks; row 2: one letter for two blanks -> all wrong: 1 of 4 in all
    assert s.metrics == {"score": 25.0}


def test_five_out_of_seven_first_five_letters() -> None:
    s = ev("five_out_of_seven").score(["A B C D E F", "GFEDC"], [list("ABCDG"), list("GFEDC")])
    assert s.metrics == {"score": pytest.approx(100 * 9 / 10)}
    assert s.correct == [False, True]


@pytest.mark.parametrize("kind", ["cloze", "subjective", "correction"])
def test_subjective_types_score_zero(kind: str) -> None:
    s = ev(kind).score(["anything"], [["x"]])
    assert s.metrics == {"score": 0.0} and s.correct == [None]


def test_type_checked_and_loop_registered_names_build() -> None:
    with pytest.raises(EvaluationError, match="question type"):
        GaokaoBenchEvaluator(question_type="essay")
    built = build_evaluation({"evaluator": {"type": "GaokaoBenchEvaluator_single_choice"}})
    assert built.evaluator_name == "GaokaoBenchEvaluator_single_choice"
    assert ev("single_choice").score([], []).metrics == {"score": 0.0}


@given(st.text(max_size=60))
def test_single_choice_reads_the_last_a_to_d(reply: str) -> None:
    letters = [c for c in reply if c in "ABCD"]
    assert extract_answers(reply, "single_choice") == letters[-1:]


@given(st.text(max_size=60), st.integers(min_value=1, max_value=4))
def test_multi_question_answers_never_exceed_the_blanks(reply: str, n: int) -> None:
    got = extract_answers(reply, "multi_question_choice", n)
    assert len(got) <= n and all(len(a) == 1 and a.isupper() for a in got)
