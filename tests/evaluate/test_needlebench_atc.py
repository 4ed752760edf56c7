"""NeedleBench v2 ATC: the boxed name of the reply, cleaned, equals the gold name."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.compat.evaluators import EVALUATORS
from promptweave.compat.postprocessors import POSTPROCESSORS
from promptweave.suites.needlebench import (
    NeedleBenchATCEvaluator,
    clean_atc_answer,
    needlebench_atc_postprocess_v2,
)


@pytest.mark.parametrize(("reply", "name"), [
    ("So the eldest is \\boxed{Jessica Stewart}.", "Jessica Stewart"),
    ("\\boxed{\\text{Jessica Stewart}}", "Jessica Stewart"),
    ("first \\boxed{A} then \\boxed{{Mary  Li}}", "Mary Li"),  # the last box; double braces dropped
    ('\\boxed{"Wang~Fang"}', "Wang Fang"),
    ("\\boxed{O\\'Brien}", "OBrien"),
    ("The answer is Jessica Stewart.", "None"),  # no box
    ("\\boxed{}", "None"),
    ("\\boxed{Anna", "None"),  # unbalanced
])
def test_postprocess(reply: str, name: str) -> None:
    assert needlebench_atc_postprocess_v2(reply) == name


def test_tilde_at_an_edge_becomes_a_space_after_stripping() -> None:
    assert clean_atc_answer("~Li") == " Li"


def test_evaluator_strips_and_compares_exactly() -> None:
    preds = ["Jessica Stewart", " Mary Li ", "mary li", "None"]
    golds = ["Jessica Stewart", "Mary Li", "Mary Li", "Tom"]
    s = NeedleBenchATCEvaluator().score(preds, golds)
    assert s.metrics == {"score": 50.0}
    assert s.correct == [True, True, False, False]
    assert s.details[2] == {"pred": "mary li", "answer": "Mary Li", "correct": False}
    assert NeedleBenchATCEvaluator().score([], []).metrics == {"score": 0.0}


def test_registered_under_reference_names() -> None:
    assert EVALUATORS["NeedleBenchATCEvaluator"] is NeedleBenchATCEvaluator
    assert EVALUATORS["needlebench_atc_evaluator"] is NeedleBenchATCEvaluator
    assert POSTPROCESSORS["needlebench_atc_postprocess_v2"] is needlebench_atc_postprocess_v2


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="{}\\"), max_size=40))
def test_any_boxed_plain_name_round_trips_cleaned(name: str) -> None:
    out = needlebench_atc_postprocess_v2(f"reasoning... \\boxed{{{name}}}")
    if not name:
        assert out == "None"
    else:
        expected = " ".join(name.split()).replace('"', "").replace("'", "").replace("~", " ")
        assert out == expected  # a blank-only name cleans to '' (only a missing box gives 'None')
