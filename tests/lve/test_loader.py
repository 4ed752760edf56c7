"""Loading LVE folders: each prompt form, each prompt-file format, and load-time rejections."""
from __future__ import annotations

import json

import pytest

from promptweave.errors import LVEError, PromptweaveError
from promptweave.lve import LVELoadError, Role, ScriptedChatModel, load_test, run_instance
from tests.lve.lve_helpers import base_test


def _sent(folder, args=None, replies=("ok",)):
    model = ScriptedChatModel(list(replies))
    run_instance(load_test(folder), args or {}, model)
    return model.sent


def test_inline_prompt_roles_default_to_user(make_lve):
    folder = make_lve(base_test(prompt=[{"content": "sys", "role": "system"}, {"content": "hi {x}"}],
                                prompt_parameters=["x"]))
    test = load_test(folder)
    assert [m.role for m in test.prompt.messages] == [Role.system, Role.user, Role.assistant]
    assert test.prompt.messages[-1].variable == "response" and test.prompt.appended_slot
    assert _sent(folder, {"x": "Ann"}) == [[{"role": "system", "content": "sys"}, {"role": "user", "content": "hi Ann"}]]


def test_unknown_message_keys_are_ignored(make_lve):
    folder = make_lve(base_test(prompt=[{"content": "hi", "note": "ignored"}]))
    assert _sent(folder) == [[{"role": "user", "content": "hi"}]]


def test_prompt_file_plain_text_keeps_text_and_normalises_crlf(make_lve):
    folder = make_lve(base_test(prompt_file="test.prompt", prompt_parameters=["x"]),
                      files={"test.prompt": "line one {x}\r\nline two\r\n\r\n"})
    assert _sent(folder, {"x": 1}) == [[{"role": "user", "content": "line one 1\nline two\n\n"}]]


def test_prompt_file_jsonl(make_lve):
    text = '{"role": "system", "content": "S"}\n{"content": "U {x}"}\n'
    folder = make_lve(base_test(prompt_file="test.prompt", prompt_parameters=["x"]), files={"test.prompt": text})
    assert _sent(folder, {"x": 2}) == [[{"role": "system", "content": "S"}, {"role": "user", "content": "U 2"}]]


def test_prompt_file_single_json_object_over_several_lines_is_one_message(make_lve):
    # LVE raises here; its documentation says a single JSON object is a message: we follow the docs.
    text = '{\n  "role": "system",\n  "content": "only system"\n}\n'
    folder = make_lve(base_test(prompt_file="test.prompt"), files={"test.prompt": text})
    assert _sent(folder) == [[{"role": "system", "content": "only system"}]]


def test_prompt_file_with_a_blank_line_is_plain_text(make_lve):
    text = 'first\n\nsecond'
    folder = make_lve(base_test(prompt_file="test.prompt"), files={"test.prompt": text})
    assert _sent(folder) == [[{"role": "user", "content": "first\n\nsecond"}]]


@pytest.mark.parametrize("text", ['[{"content": "Hello"}]\n', "42\n", '{"a": 1}\n[1, 2]\n', "[\n1\n]\n"])
def test_prompt_file_json_that_is_not_a_message_object_is_refused(make_lve, text):
    folder = make_lve(base_test(prompt_file="test.prompt"), files={"test.prompt": text})
    with pytest.raises(LVELoadError):
        load_test(folder)


@pytest.mark.parametrize("name", ["../outside.prompt", "sub/../../outside.prompt"])
def test_prompt_file_outside_the_folder_is_refused(make_lve, tmp_path, name):
    (tmp_path / "outside.prompt").write_text("secret")
    folder = make_lve(base_test(prompt_file=name))
    with pytest.raises(LVELoadError) as info:
        load_test(folder)
    assert info.value.field == "prompt_file" and "outside" in info.value.message


def test_prompt_file_absolute_path_is_refused(make_lve, tmp_path):
    target = tmp_path / "abs.prompt"
    target.write_text("x")
    with pytest.raises(LVELoadError, match="absolute"):
        load_test(make_lve(base_test(prompt_file=str(target))))


def test_prompt_file_in_a_subfolder_is_found(make_lve):
    folder = make_lve(base_test(prompt_file="prompts/a.prompt"), files={"prompts/a.prompt": "sub"})
    assert _sent(folder) == [[{"role": "user", "content": "sub"}]]


def test_multi_run_prompt_with_prompt_file_and_no_name(make_lve):
    folder = make_lve(base_test(
        multi_run_prompt=[{"prompt_file": "a.prompt"}, {"prompt": [{"content": "B {x}"}]}],
        prompt_parameters=["x"],
        checker_args={"checker_name": "MultiRunLambdaChecker", "func": "lambda rs, x: len(rs) == 2"}),
        files={"a.prompt": "A {x}"})
    model = ScriptedChatModel(["1", "2"])
    result = run_instance(load_test(folder), {"x": 7}, model)
    assert model.sent == [[{"role": "user", "content": "A 7"}], [{"role": "user", "content": "B 7"}]]
    assert result.response == ["1", "2"] and result.is_safe is True


def test_image_url_message_is_sent_as_content_parts(make_lve):
    folder = make_lve(base_test(prompt=[{"content": "Describe", "image_url": "{u}"}], prompt_parameters=["u"]))
    assert _sent(folder, {"u": "https://e.x/i.png"}) == [[{"role": "user", "content": [
        {"type": "text", "text": "Describe"}, {"type": "image_url", "image_url": "https://e.x/i.png"}]}]]


@pytest.mark.parametrize("overrides,field", [
    (dict(prompt=[{"content": "a"}], prompt_file="t.prompt"), "prompt/prompt_file"),
    (dict(prompt=None), None),
    (dict(prompt=[{"content": "a", "role": "User"}]), "prompt[0].role"),
    (dict(prompt=[{"content": "a", "role": None}]), "prompt[0].role"),
    (dict(prompt=[{"content": 3}]), "prompt[0].content"),
    (dict(prompt=[{"role": "user"}]), "prompt[0].content"),
    (dict(prompt=[]), "prompt"),
    (dict(prompt="just text"), "prompt"),
    (dict(prompt=[{"content": "a"}, {"role": "assistant"}, {"content": "b"}]), "prompt[1].variable"),
    (dict(prompt=[{"content": "a"}], model=None), "model"),
    (dict(prompt=[{"content": "a"}], description=None), "description"),
    (dict(prompt=[{"content": "a"}], model="acme/x"), "model"),
    (dict(prompt=[{"content": "a", "role": "system"}, {"content": "b"}], model="mistralai/mistral-7b-instruct-v0.1"),
     "prompt[0].role"),
    (dict(prompt=[{"content": "a"}], checker_args={"checker_name": "Nope"}), "checker_args.checker_name"),
    (dict(prompt=[{"content": "a"}], checker_args={"checker_name": "RegexChecker", "pattern": "("}),
     "checker_args.match_safe"),
    (dict(prompt=[{"content": "a"}], checker_args={"checker_name": "RegexChecker", "pattern": "(", "match_safe": True}),
     "checker_args.pattern"),
    (dict(prompt=[{"content": "a"}], tags=[{"name": "color", "value": "red"}]), "tags[0].name"),
    (dict(prompt=[{"content": "a"}], prompt_parameters=["<please fill in>"]), "prompt_parameters"),
    (dict(multi_run_prompt=[{"name": "a", "prompt": [{"content": "x"}], "repetitions": 0}],
          checker_args={"checker_name": "MultiRunLambdaChecker", "func": "lambda rs: True"}),
     "multi_run_prompt[0].repetitions"),
    (dict(prompt=[{"content": "a"}], checker_args={"checker_name": "MultiRunLambdaChecker", "func": "lambda rs: 1"}),
     "checker_args.checker_name"),
])
def test_invalid_tests_are_rejected_at_load_naming_the_field(make_lve, overrides, field):
    with pytest.raises(LVELoadError) as info:
        load_test(make_lve(base_test(**overrides)))
    assert info.value.field == field
    assert isinstance(info.value, PromptweaveError) and info.value.stage == "load"


def test_not_json_test_file(make_lve):
    with pytest.raises(LVELoadError, match="not valid JSON"):
        load_test(make_lve(raw='{"model": ,}'))


def test_missing_prompt_file_names_the_field(make_lve):
    with pytest.raises(LVELoadError) as info:
        load_test(make_lve(base_test(prompt_file="missing.prompt")))
    assert info.value.field == "prompt_file" and info.value.value == "missing.prompt"


def test_custom_checker_class_is_found_without_running_the_file(make_lve, tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')\nclass Mine:\n    pass\n"
    folder = make_lve(base_test(prompt=[{"content": "a"}], checker_args={"checker_name": "Mine"}),
                      files={"checker/checker.py": code})
    test = load_test(folder)
    assert test.checker.custom_file is not None and not marker.exists()
    with pytest.raises(LVEError, match="trust-checkers"):
        run_instance(test, {}, ScriptedChatModel(["x"]))
    assert not marker.exists()


def test_example_folder_loads():
    from pathlib import Path

    test = load_test(Path(__file__).parents[2] / "examples" / "lve" / "arithmetic_carry")
    assert test.checker.name == "LambdaChecker" and test.prompt_parameters == ("a", "b")
    assert json.loads((test.path / "test.json").read_text())["prompt_file"] == "test.prompt"
