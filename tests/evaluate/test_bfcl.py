"""BFCL single-turn AST checking and relevance scoring (the function-calling form's evaluators)."""
from __future__ import annotations

import json

import pytest

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext
from promptweave.suites.bfcl.scoring import BFCLRelevanceEvaluator, BFCLSingleTurnEvaluator

F = [{"name": "add", "parameters": {"type": "dict", "required": ["a", "b"], "properties": {
         "a": {"type": "integer"}, "b": {"type": "integer"}, "note": {"type": "string"}}}},
     {"name": "mul", "parameters": {"type": "dict", "required": ["x"], "properties": {
         "x": {"type": "array", "items": {"type": "integer"}}, "scale": {"type": "float"}}}}]


def _row(i, category):
    return {"id": f"{category}_{i}", "function": json.dumps(F)}


def _call(name, **args):
    return {name: json.dumps(args)}


def _score(category, preds, golds):
    ev = BFCLSingleTurnEvaluator(category=category)
    rows = [_row(i, category) for i in range(len(preds))]
    return ev.score(preds, [json.dumps(g) for g in golds], EvalContext(rows=rows))


def test_simple_checks_names_types_values_and_optional_parameters():
    gold = [{"add": {"a": [1], "b": [2], "note": ["Hello world", ""]}}]
    cases = [([_call("add", a=1, b=2)], True),                         # note is optional
             ([_call("add", a=1, b=2, note="hello-World")], True),     # strings folded
             ([_call("add", a=1, b=3)], False),                        # value
             ([_call("add", a=1)], False),                             # required missing
             ([_call("add", a=1, b=2, c=0)], False),                   # undocumented parameter
             ([_call("add", a="1", b=2)], False),                      # type
             ([_call("add", a=True, b=2)], False),                     # a bool is not an integer
             ([_call("sub", a=1, b=2)], False),                        # name
             ([_call("add", a=1, b=2), _call("add", a=1, b=2)], False),  # two calls
             ("I cannot call tools", False), ([], False)]
    s = _score("simple", [c for c, _ in cases], [gold] * len(cases))
    assert s.correct == [ok for _, ok in cases]
    assert s.metrics == {"accuracy": pytest.approx(2 / len(cases)), "correct_count": 2, "total_count": len(cases)}


def test_float_parameter_accepts_an_integer_and_lists_compare_by_element():
    gold = [{"mul": {"x": [[1, 2]], "scale": [2.0, ""]}}]
    s = _score("multiple", [[_call("mul", x=[1, 2], scale=2)], [_call("mul", x=[2, 1])]], [gold] * 2)
    assert s.correct == [True, False]


def test_parallel_matches_calls_in_any_order():
    gold = [{"add": {"a": [1], "b": [2]}}, {"add": {"a": [3], "b": [4]}}]
    good = [_call("add", a=3, b=4), _call("add", a=1, b=2)]
    short = [_call("add", a=3, b=4)]
    twice = [_call("add", a=1, b=2), _call("add", a=1, b=2)]
    s = _score("parallel", [good, short, twice], [gold] * 3)
    assert s.correct == [True, False, False]


def test_relevance_asks_only_whether_something_was_called():
    ev = BFCLRelevanceEvaluator(category="irrelevance")
    preds = [[_call("add", a=1, b=2)], "no call", []]
    rows = [{"id": f"irrelevance_{i}"} for i in range(3)] + [{"id": f"live_relevance_{i}"} for i in range(3)]
    s = ev.score(preds + preds, [""] * 6, EvalContext(rows=rows))
    assert s.correct == [False, True, True, True, False, False]
    assert s.metrics["accuracy"] == pytest.approx(3 / 6)


def test_java_categories_and_prompt_style_models_are_refused(monkeypatch):
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")  # bridge: an installed ais_bench would serve the class
    with pytest.raises(EvaluationError, match="Java"):
        BFCLSingleTurnEvaluator(category="javascript")
    with pytest.raises(EvaluationError, match="is_fc_model"):
        BFCLSingleTurnEvaluator(category="simple", is_fc_model=False)


def test_java_categories_use_the_installed_references_evaluator(monkeypatch):
    from promptweave.compat import bridge
    from promptweave.evaluate.config import BridgedEvaluator

    class RefBFCL:  # a double for ais_bench's class, which cannot be imported here (bfcl_eval is absent)
        def __init__(self, category, is_fc_model=True):
            self.category = category

        def score(self, predictions, references, test_set):
            return {"accuracy": 1.0, "correct_count": len(predictions), "total_count": len(predictions)}

    monkeypatch.setattr(bridge, "reference_class",
                        lambda fam, name: ("ais_bench", RefBFCL) if name == "BFCLSingleTurnEvaluator" else None)
    ev = BFCLSingleTurnEvaluator(category="java")
    assert isinstance(ev, BridgedEvaluator) and ev.inner.category == "java"
    s = ev.score([[_call("add", a=1, b=2)]], ["[]"], EvalContext(rows=[_row(0, "java")]))
    assert s.metrics["accuracy"] == 1.0
    assert isinstance(BFCLSingleTurnEvaluator(category="simple"), BFCLSingleTurnEvaluator)
