"""RULER evaluators: share of golds found (case-insensitive substring) per row; QA: any gold found."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.compat.evaluators import EVALUATORS
from promptweave.errors import EvaluationError
from promptweave.evaluate import build_evaluation
from promptweave.suites.ruler import RulerCweEvaluator, RulerQaEvaluator

SHARE = ("RulerCweEvaluator", "RulerFweEvaluator", "RulerNiahEvaluator", "RulerVtEvaluator")


@pytest.mark.parametrize("name", SHARE)
def test_share_of_golds_found(name: str) -> None:
    ev = EVALUATORS[name]()
    preds = ["The words are APPLE, pear and plum.", "", "nothing here"]
    golds = [["apple", "pear", "kiwi", "plum"], ["x"], ["a b", "here"]]
    # row 1: 3 of 4; row 2: empty reply finds nothing; row 3: 1 of 2 -> (75 + 0 + 50) / 3
    s = ev.score(preds, golds)
    assert s.metrics == {"score": round((0.75 + 0 + 0.5) / 3 * 100, 2)} == {"score": 41.67}
    assert s.correct == [False, False, False]
    assert s.details[0]["found"] == 3


def test_qa_any_answer_counts_fully() -> None:
    s = RulerQaEvaluator().score(["It was in Paris, France.", "London?", "  "],
                                 [["paris", "Lyon"], ["Berlin"], ["x"]])
    assert s.metrics == {"score": 33.33}
    assert s.correct == [True, False, False]


def test_rounded_to_two_places_and_empty() -> None:
    s = RulerCweEvaluator().score(["a", "b", "c"], [["a"], ["a"], ["a"]])
    assert s.metrics["score"] == 33.33
    assert RulerCweEvaluator().score([], []).metrics == {"score": 0.0}


def test_bare_string_gold_is_one_answer_and_bad_gold_is_typed() -> None:
    assert RulerCweEvaluator().score(["says hello"], ["hello"]).metrics == {"score": 100.0}
    with pytest.raises(EvaluationError, match="non-empty list"):
        RulerCweEvaluator().score(["x"], [[]])
    with pytest.raises(EvaluationError, match="1 predictions but 2 references"):
        RulerCweEvaluator().score(["x"], [["a"], ["b"]])


def test_resolved_from_the_reference_module_path() -> None:
    ev = build_evaluation({"evaluator": {"type": "opencompass.datasets.ruler.ruler_niah.RulerNiahEvaluator"}})
    assert ev.evaluator_name == "RulerNiahEvaluator"


@given(st.lists(st.text(alphabet="abcXYZ ", min_size=1, max_size=4), min_size=1, max_size=5),
       st.text(alphabet="abcXYZ ", max_size=30))
def test_score_is_the_found_share(golds: list[str], reply: str) -> None:
    expected = sum(g.lower() in reply.lower() for g in golds) / len(golds)
    s = RulerCweEvaluator().score([reply], [golds])
    assert s.metrics["score"] == round(expected * 100, 2)
    assert s.correct == [expected == 1.0]
