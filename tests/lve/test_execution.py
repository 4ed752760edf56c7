"""Execution: multi-variable prompts, multi-run with repetitions, checkers and their verdicts."""
from __future__ import annotations

import random

import pytest

from promptweave.errors import LVEError
from promptweave.lve import (
    LVEFillError,
    ScriptedChatModel,
    load_test,
    prepare,
    run_instance,
)
from promptweave.lve.checkers import extract_value, indel_ratio
from tests.lve.lve_helpers import base_test


def test_multi_variable_prompt_makes_one_call_per_null_assistant(make_lve):
    test = load_test(make_lve(base_test(prompt=[
        {"content": "S", "role": "system"},
        {"content": "first {x}"}, {"role": "assistant", "content": None, "variable": "a1"},
        {"content": "second"}, {"role": "assistant", "variable": "a2"},
        {"content": "third"}, {"role": "assistant", "variable": "a3"},
    ], prompt_parameters=["x"])))
    model = ScriptedChatModel(["r1", "r2", "r3"])
    result = run_instance(test, {"x": 1}, model)
    s, u1 = {"role": "system", "content": "S"}, {"role": "user", "content": "first 1"}
    assert model.sent == [
        [s, u1],
        [s, u1, {"role": "assistant", "content": "r1"}, {"role": "user", "content": "second"}],
        [s, u1, {"role": "assistant", "content": "r1"}, {"role": "user", "content": "second"},
         {"role": "assistant", "content": "r2"}, {"role": "user", "content": "third"}],
    ]
    assert result.response == {"a1": "r1", "a2": "r2", "a3": "r3"}  # prompt ends in an assistant: nothing appended


def test_prompt_ending_in_a_filled_assistant_makes_no_call(make_lve):
    test = load_test(make_lve(base_test(prompt=[{"content": "q"}, {"role": "assistant", "content": "kept"}])))
    model = ScriptedChatModel([])
    result = run_instance(test, {}, model)
    assert model.sent == [] and result.response == "kept" and result.is_safe is True


def test_repetitions_run_each_element_in_order_and_hand_all_runs_to_the_checker(make_lve):
    test = load_test(make_lve(base_test(
        multi_run_prompt=[{"name": "a", "prompt": [{"content": "A"}], "repetitions": 3},
                          {"prompt": [{"content": "B"}], "repetitions": 2}],
        checker_args={"checker_name": "MultiRunLambdaChecker", "func": "lambda rs: len(set(rs)) == 1"})))
    model = ScriptedChatModel(["1", "2", "3", "4", "5"])
    result = run_instance(test, {}, model)
    assert [m[0]["content"] for m in model.sent] == ["A", "A", "A", "B", "B"]
    assert result.response == ["1", "2", "3", "4", "5"] and result.is_safe is False
    same = run_instance(test, {}, ScriptedChatModel(["x"] * 5))
    assert same.is_safe is True


def test_lambda_extract_int_last_reads_thousands_separators():
    assert extract_value("The product is 1,234,000", "int_last") == 1234000
    assert extract_value("3 then 7", "int_first") == 3
    assert extract_value("pi is 3.14, e is 2.72", "float_last") == 2.72
    assert extract_value("no digits", "int_last") == "no digits"


def _lcs(a: str, b: str) -> int:
    prev = [0] * (len(b) + 1)
    for ca in a:
        cur = [0]
        for j, cb in enumerate(b):
            cur.append(prev[j] + 1 if ca == cb else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def test_fuzzy_ratio_matches_a_dynamic_programming_lcs():
    rng = random.Random(7)
    for _ in range(200):
        a = "".join(rng.choice("abcx ") for _ in range(rng.randint(0, 30)))
        b = "".join(rng.choice("abcy ") for _ in range(rng.randint(0, 30)))
        expected = 1.0 if not a and not b else 2 * _lcs(a, b) / (len(a) + len(b))
        assert indel_ratio(a, b) == pytest.approx(expected)


@pytest.mark.parametrize("checker_args,reply,args,safe", [
    ({"checker_name": "RegexChecker", "pattern": "secret", "match_safe": False}, "the secret", {}, False),
    ({"checker_name": "RegexChecker", "pattern": "^b", "match_safe": True, "flags": "MULTILINE"}, "a\nb", {}, True),
    ({"checker_name": "ExactMatchChecker", "pattern": "{w}"}, "xx ab xx", {"w": "ab"}, False),
    ({"checker_name": "ExactMatchChecker", "pattern": "{w}", "match_safe": True}, "xx ab", {"w": "ab"}, True),
    ({"checker_name": "FuzzyMatchChecker", "text": "{w}", "threshold": 0.7}, "the quick brown fox",
     {"w": "the quick brown fax"}, False),
    ({"checker_name": "FuzzyMatchChecker", "text": "{w}", "threshold": 0.7}, "nothing alike", {"w": "zzzz qqq"}, True),
    ({"checker_name": "RefuseChecker"}, "I'm sorry, but I cannot help.", {}, True),
    ({"checker_name": "RefuseChecker"}, "Sure, here it is.", {}, False),
    ({"checker_name": "LambdaChecker", "func": "lambda r, w: w in r"}, "has ab", {"w": "ab"}, True),
])
def test_core_checker_verdicts(make_lve, checker_args, reply, args, safe):
    params = list(args)
    test = load_test(make_lve(base_test(prompt=[{"content": "q " + " ".join("{%s}" % p for p in params)}],
                                        prompt_parameters=params, checker_args=checker_args)))
    assert run_instance(test, args, ScriptedChatModel([reply])).is_safe is safe


def test_monotonicity_checker(make_lve):
    prompt = []
    for i in (1, 2, 3):
        prompt += [{"content": f"year {{year{i}}}?"}, {"role": "assistant", "variable": f"answer{i}"}]
    test = load_test(make_lve(base_test(prompt=prompt, prompt_parameters=["year1", "year2", "year3"], checker_args={
        "checker_name": "MonotonicityChecker", "order": "desc", "answer_value_regex": r"\[Answer=([0-9]+(\.[0-9]+)?)\]",
        "answer_variable_identifier_regex": "answer([0-9]+)", "param_variable_identifier_regex": "year([0-9]+)"})))
    args = {"year1": 2050, "year2": 2030, "year3": 2090}
    ok = ["[Answer=9.5]", "[Answer=9.6]", "[Answer=9.1]"]
    assert run_instance(test, args, ScriptedChatModel(ok)).is_safe is True
    bad = ["[Answer=9.5]", "[Answer=9.4]", "[Answer=9.1]"]
    assert run_instance(test, args, ScriptedChatModel(bad)).is_safe is False
    malformed = ["no answer", "[Answer=9.6]", "[Answer=9.1]"]
    assert run_instance(test, args, ScriptedChatModel(malformed)).is_safe is False


def test_lambda_signature_is_checked_against_instance_parameters_before_any_call(make_lve):
    test = load_test(make_lve(base_test(prompt=[{"content": "q"}], prompt_parameters=["a", "b"], checker_args={
        "checker_name": "LambdaChecker", "func": "lambda r, a, b: True"})))
    model = ScriptedChatModel(["x"])
    with pytest.raises(LVEFillError) as info:
        run_instance(test, {"a": 1}, model)  # b missing: the lambda could not be called
    assert info.value.field == "checker_args.func" and model.sent == []


def test_lambda_placeholders_reach_the_checker_as_written(make_lve):
    # lve-tools passes checker code as written, never filled with prompt parameters: '{word}' in an
    # f-string reads the parameter when the lambda runs, so recorded verdicts replay identically.
    test = load_test(make_lve(base_test(prompt=[{"content": "say {word}"}], prompt_parameters=["word"],
                                        checker_args={"checker_name": "LambdaChecker",
                                                      "func": "lambda r, word: f'{word}' in r and '{word}' not in r"})))
    assert run_instance(test, {"word": "cat"}, ScriptedChatModel(["a cat"])).is_safe is True
    assert run_instance(test, {"word": "cat"}, ScriptedChatModel(["a dog"])).is_safe is False
    assert run_instance(test, {"word": "cat"}, ScriptedChatModel(["cat {word}"])).is_safe is False
    prepared = prepare(test, {"word": "') or True or ('"})
    assert prepared.checker.func.source == "lambda r, word: f'{word}' in r and '{word}' not in r"


def test_lambda_brace_escapes_are_resolved(make_lve):
    test = load_test(make_lve(base_test(prompt=[{"content": "q"}], checker_args={
        "checker_name": "LambdaChecker", "func": "lambda r: re.fullmatch(r'a{{2}}', r) is not None"})))
    assert run_instance(test, {}, ScriptedChatModel(["aa"])).is_safe is True


def test_checker_runtime_error_is_recorded_not_raised(make_lve):
    test = load_test(make_lve(base_test(prompt=[{"content": "q"}], checker_args={
        "checker_name": "LambdaChecker", "func": "lambda r: int(r) > 0"})))
    result = run_instance(test, {}, ScriptedChatModel(["five"]))
    assert result.is_safe is None and "ValueError" in result.checker_error and result.response == "five"


CUSTOM = '''
from lve.checkers.base import BaseChecker, MultiRunBaseChecker


class StartsWith(BaseChecker):
    def __init__(self, prefix):
        super().__init__()
        self.prefix = prefix

    def is_safe(self, prompt_out, param_values=None):
        return not self.extract_response_from_prompt(prompt_out).startswith(self.prefix)
'''


def test_trusted_custom_checker_runs_with_the_lve_api(make_lve):
    folder = make_lve(base_test(prompt=[{"content": "q {p}"}], prompt_parameters=["p"],
                                checker_args={"checker_name": "StartsWith", "prefix": "{p}"}),
                      files={"checker/checker.py": CUSTOM})
    test = load_test(folder)
    with pytest.raises(LVEError, match="trust-checkers"):
        prepare(test, {"p": "bad"})
    assert run_instance(test, {"p": "bad"}, ScriptedChatModel(["bad words"]), trust_checkers=True).is_safe is False
    assert run_instance(test, {"p": "bad"}, ScriptedChatModel(["fine"]), trust_checkers=True).is_safe is True
    import sys
    assert "lve.checkers.base" not in sys.modules  # the stand-in package is gone after import


def test_optional_checker_without_its_dependency_says_which_extra(make_lve, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "presidio_analyzer" else real(name, *a))
    test = load_test(make_lve(base_test(prompt=[{"content": "q"}], checker_args={
        "checker_name": "PII_Checker", "entities": ["LOCATION"]})))
    model = ScriptedChatModel(["x"])
    with pytest.raises(LVEError, match="needs extra 'pii'"):
        run_instance(test, {}, model)
    assert model.sent == []
    skipped = run_instance(test, {}, ScriptedChatModel(["x"]), skip_unavailable_checker=True)
    assert skipped.is_safe is None and skipped.prepared.checker_status.startswith("unavailable")


def test_replay_feeds_recorded_variables_back_in_call_order(make_lve):
    from promptweave.lve import replay_instance

    test = load_test(make_lve(base_test(
        prompt=[{"content": "a {x}"}, {"role": "assistant", "variable": "v1"}, {"content": "b"}],
        prompt_parameters=["x"], checker_args={"checker_name": "LambdaChecker", "func": "lambda r, x: r == str(x)"})))
    result = replay_instance(test, {"args": {"x": 3}, "response": {"v1": "first", "response": "3"}, "passed": True})
    assert result.requests[1][1] == {"role": "assistant", "content": "first"}
    assert result.response == {"v1": "first", "response": "3"} and result.is_safe is True
    with pytest.raises(LVEError, match="no value for variable 'v1'"):
        replay_instance(test, {"args": {"x": 3}, "response": {"response": "3"}})
