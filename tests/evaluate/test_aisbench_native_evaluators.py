"""AISBench's judge verdicts, RealworldQA, SIQA's edit-distance accuracy and IFEval, native: the same answers as
AISBench's own classes on the same rows (recorded from AISBench in ``fixtures/aisbench_evaluators.json``; with
``$PROMPTWEAVE_AIS_FULL_VENV`` naming a venv where AISBench is installed with its dependencies, re-checked live)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.compat.evaluators import EVALUATORS
from promptweave.compat.postprocessors import POSTPROCESSORS
from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext
from promptweave.evaluate.edit_distance import levenshtein
from tests.evaluate.aisbench_evaluator_cases import CASES, load_fixture, reference_venv, run_reference

RECORDED = load_fixture()


def native(name: str, case: dict):
    name = name.split("_250")[0]
    if case["kind"] == "map":
        fn = POSTPROCESSORS[f"ais_bench:{name}"] if f"ais_bench:{name}" in POSTPROCESSORS else POSTPROCESSORS[name]
        return [fn(x) for x in case["inputs"]]
    cls = EVALUATORS[f"ais_bench:{name}"] if f"ais_bench:{name}" in EVALUATORS else EVALUATORS[name]
    rows = case.get("rows")
    ctx = EvalContext(rows=rows, prompts=case.get("origin_prompt")) if rows or "origin_prompt" in case else None
    return cls().score(case["predictions"], case["references"], ctx)


def same(got, want) -> None:
    if isinstance(want, list):
        assert got == want
        return
    for k, v in want["metrics"].items():
        assert got.metrics[k] == pytest.approx(v), k
    for k, v in want.get("text", {}).items():  # a figure the reference writes as text (HLE's accuracy)
        assert got.extra.get(f"{k}_text") == v, k
    if want["rows"] is not None:
        for d, w in zip(got.details, want["rows"], strict=True):
            for k, v in w.items():
                assert d.get(k) == v, (k, d, w)


def test_every_case_is_recorded():
    assert set(RECORDED) == set(CASES), "re-record: python -m tests.evaluate.aisbench_evaluator_cases"


@pytest.mark.parametrize("name", sorted(CASES))
def test_native_gives_what_aisbench_gave(name):
    same(native(name, CASES[name]), RECORDED[name])


@pytest.mark.skipif(reference_venv() is None, reason="re-checking the AISBench record needs AISBench installed with "
                                                     "its dependencies in a venv named by $PROMPTWEAVE_AIS_FULL_VENV "
                                                     "(the comparison with the record ran above)")
def test_the_record_is_what_aisbench_does_now():
    assert run_reference(reference_venv()) == RECORDED


@settings(deadline=None, max_examples=200)
@given(st.text(max_size=30))
def test_get_a_or_b_reads_only_the_last_character(reply):
    got = POSTPROCESSORS["get_a_or_b"](reply)
    assert got == (reply[-1] if reply[-1:] in ("A", "B") else "B")


@settings(deadline=None, max_examples=200)
@given(st.text(alphabet="abcx", max_size=12), st.text(alphabet="abcx", max_size=12))
def test_levenshtein_is_the_edit_distance(a, b):
    d = levenshtein(a, b)
    assert d == levenshtein(b, a)
    assert abs(len(a) - len(b)) <= d <= max(len(a), len(b))
    assert (d == 0) == (a == b)
    # one edit more or less than a neighbour
    assert abs(levenshtein(a + "z", b) - d) <= 1


def test_edacc_refuses_a_gold_without_candidates():
    with pytest.raises(EvaluationError) as err:
        EVALUATORS["EDAccEvaluator"]().score(["A"], ["A"])
    assert "candidates" in err.value.message


def test_length_mismatch_is_typed():
    for name in ("LLMJudgeCorrectEvaluator", "RealworldQAEvaluator"):
        with pytest.raises(EvaluationError):
            EVALUATORS[name]().score(["A"], [])


def _ifeval_row(iid: str, **kw):
    return {"key": 1, "prompt": "p", "instruction_id_list": [iid], "kwargs": [kw]}


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


@pytest.mark.skipif(_has("langdetect"), reason="checks the refusal when langdetect is not installed")
def test_ifeval_language_check_without_langdetect_is_typed():
    from promptweave.errors import MissingExtraError

    ev = EVALUATORS["ais_bench:IFEvaluator"]()
    with pytest.raises(MissingExtraError) as err:
        ev.score(["ALL CAPS HERE"], [_ifeval_row("change_case:english_capital")])
    assert err.value.value == "langdetect"
    # the case test fails first, so no language detection is needed (as in the reference)
    got = ev.score(["Mixed Case"], [_ifeval_row("change_case:english_capital")])
    assert got.metrics["Prompt-level-strict-accuracy"] == 0.0


def test_ifeval_missing_argument_is_typed_not_random():
    ev = EVALUATORS["ais_bench:IFEvaluator"]()
    with pytest.raises(EvaluationError) as err:
        ev.score(["some words"], [_ifeval_row("length_constraints:number_words", relation="at least")])
    assert err.value.value == "num_words"


def test_ifeval_is_aisbench_only():
    # OpenCompass's IFEvaluator is another class: a plain name is not this one
    assert EVALUATORS.get("IFEvaluator") is None or EVALUATORS.get("IFEvaluator") is not EVALUATORS[
        "ais_bench:IFEvaluator"]
