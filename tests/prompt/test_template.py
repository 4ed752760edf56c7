
import pytest

from promptweave.errors import PromptweaveWarning, TemplateError
from promptweave.prompt.template import PromptTemplate


def test_shapes_are_detected():
    assert PromptTemplate("x {q}").shape == "string"
    assert PromptTemplate({"round": [{"role": "HUMAN", "prompt": "{q}"}]}).shape == "dialogue"
    assert PromptTemplate({"A": "{q} A", "B": {"round": [{"role": "BOT", "prompt": "B"}]}}).shape == "labels"


def test_round_must_be_a_list_and_error_names_the_field():
    with pytest.raises(TemplateError) as e:
        PromptTemplate({"round": {"role": "HUMAN"}}, field="datasets[0].infer_cfg.prompt_template.template")
    assert "datasets[0].infer_cfg.prompt_template.template.round" in str(e.value)


def test_turn_without_role_names_the_item():
    with pytest.raises(TemplateError) as e:
        PromptTemplate({"round": [{"role": "HUMAN", "prompt": "a"}, {"prompt": "b"}]})
    assert "template.round[1].role" in str(e.value)


def test_ice_token_missing_from_string_template_is_an_error():
    with pytest.raises(TemplateError) as e:
        PromptTemplate("no token here", ice_token="</E>")
    assert "ice_token" in str(e.value)


def test_ice_token_missing_from_dialogue_is_a_warning():
    with pytest.warns(PromptweaveWarning, match="ice_token"):
        PromptTemplate({"round": [{"role": "HUMAN", "prompt": "q"}]}, ice_token="</E>")


def test_template_of_wrong_type():
    with pytest.raises(TemplateError):
        PromptTemplate(42)


def test_label_lookup_matches_str_of_label():
    t = PromptTemplate({"0": "zero {q}", "1": "one {q}"})
    assert t.raw_for(0) == ("0", "zero {q}")
    with pytest.raises(TemplateError) as e:
        t.raw_for(7)
    assert "no template for label 7" in str(e.value)
