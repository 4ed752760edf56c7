"""Filling prompts: Python format semantics, refused attribute/index access, the args split."""
from __future__ import annotations

import pytest

from promptweave.lve import LVEFillError, LVELoadError, ScriptedChatModel, load_test, prepare, run_instance
from promptweave.lve.runner import generation_params, split_instance_args
from promptweave.lve.template import TemplateSyntaxError, compile_template, fill_twice
from tests.lve.lve_helpers import base_test


@pytest.mark.parametrize("template,values,expected", [
    ("{x:>5}|", {"x": "ab"}, "   ab|"),
    ("{x!r}", {"x": "ab"}, "'ab'"),
    ("{x:.2f}", {"x": 3.14159}, "3.14"),
    ("{x:>{w}}", {"x": 1, "w": 4}, "   1"),
    ("{{literal}} {x}", {"x": 1}, "{literal} 1"),
    ("}}{{", {}, "}{"),
    ("{x}", {"x": [1, "a"]}, "[1, 'a']"),
    ("{x}", {"x": True}, "True"),
])
def test_python_format_semantics(template, values, expected):
    assert compile_template(template).fill(values) == expected
    assert template.format_map(values) == expected  # same as Python for ordinary values


def test_values_are_never_reread_as_template_syntax():
    assert compile_template("{a}{b}").fill({"a": "{b}", "b": "X"}) == "{b}X"


@pytest.mark.parametrize("template", ["{x.__class__}", "{x[0]}", "{x.real}", "{x[__globals__]}"])
def test_attribute_and_index_access_is_refused(template):
    with pytest.raises(TemplateSyntaxError, match="attribute or index access"):
        compile_template(template)


@pytest.mark.parametrize("template,match", [
    ("a } b", "Single '}'"), ("a { b", "bad placeholder syntax"), ("{}", "positional"), ("{0}", "positional"), ("{x!z}", "conversion"),
])
def test_bad_placeholder_syntax(template, match):
    with pytest.raises(TemplateSyntaxError, match=match):
        compile_template(template)


def test_format_spec_that_does_not_fit_the_value_is_a_fill_error(make_lve):
    test = load_test(make_lve(base_test(prompt=[{"content": "{n:d}"}], prompt_parameters=["n"])))
    assert prepare(test, {"n": 5}).conversations[0][0].content == "5"
    with pytest.raises(LVEFillError) as info:
        prepare(test, {"n": "five"})
    assert info.value.field == "prompt[0].content"


def test_unknown_parameter_is_a_load_error(make_lve):
    with pytest.raises(LVELoadError) as info:
        load_test(make_lve(base_test(prompt=[{"content": "Hi {who}"}], prompt_parameters=["name"])))
    assert info.value.field == "prompt[0].content" and info.value.value == "who"


def test_attribute_access_in_a_prompt_is_a_load_error(make_lve):
    with pytest.raises(LVELoadError, match="attribute or index access"):
        load_test(make_lve(base_test(prompt=[{"content": "{x.__class__.__mro__}"}], prompt_parameters=["x"])))


def test_missing_and_null_parameter_values_are_fill_errors(make_lve):
    test = load_test(make_lve(base_test(prompt=[{"content": "Hi {name}"}], prompt_parameters=["name"])))
    for args in ({}, {"name": None}, {"other": "x"}):
        model = ScriptedChatModel(["x"])
        with pytest.raises(LVEFillError, match=r"\{name\} has no value"):
            run_instance(test, args, model)
        assert model.sent == []


def test_assistant_messages_are_not_substituted(make_lve):
    test = load_test(make_lve(base_test(
        prompt=[{"content": "q {x}"}, {"role": "assistant", "content": "{x} stays", "variable": "shot"},
                {"content": "again {x}"}], prompt_parameters=["x"])))
    model = ScriptedChatModel(["r"])
    result = run_instance(test, {"x": 1}, model)
    assert model.sent[0][1] == {"role": "assistant", "content": "{x} stays"}
    assert result.response == {"shot": "{x} stays", "response": "r"}


def test_split_instance_args_like_lve():
    params, model_args = split_instance_args({"a": 1, "b": None, "temperature": 0.3, "stray": "s"}, ["a", "b"])
    assert params == {"a": 1} and model_args == {"temperature": 0.3, "stray": "s"}
    assert split_instance_args({"a": 1}, None) == ({}, {"a": 1})


def test_model_args_merge_defaults_and_map_to_generation_params(make_lve):
    test = load_test(make_lve(base_test(prompt=[{"content": "{a}"}], prompt_parameters=["a"],
                                        default_model_args={"max_tokens": 32, "top_p": 0.5, "do_sample": False})))
    prepared = prepare(test, {"a": 1, "top_p": 0.9, "max_tokens": None})
    assert prepared.model_args == {"max_tokens": 32, "top_p": 0.9, "do_sample": False, "temperature": 0.0}
    p = prepared.params
    assert (p.temperature, p.top_p, p.max_out_len, p.extra) == (0.0, 0.9, 32, {"do_sample": False})
    with pytest.raises(LVEFillError) as info:
        generation_params({"temperature": "hot"})
    assert info.value.field == "args.temperature"


def test_checker_args_are_formatted_with_all_instance_args(make_lve):
    test = load_test(make_lve(base_test(
        prompt=[{"content": "say {w}"}], prompt_parameters=["w"],
        checker_args={"checker_name": "RegexChecker", "pattern": "^{w}{{2}}$", "match_safe": True})))
    assert run_instance(test, {"w": "a"}, ScriptedChatModel(["aa"])).is_safe is True
    assert run_instance(test, {"w": "a"}, ScriptedChatModel(["aaa"])).is_safe is False
    with pytest.raises(LVEFillError) as info:
        prepare(load_test(make_lve(base_test(prompt=[{"content": "x"}], checker_args={
            "checker_name": "RegexChecker", "pattern": "{nope}", "match_safe": True}))), {})
    assert info.value.field == "checker_args.pattern"


def test_exact_match_second_pass_reads_template_text_only():
    t = compile_template("{{p}} and {v}")
    assert fill_twice(t, {"v": "{p}"}, {"p": "P"}) == "P and {p}"
