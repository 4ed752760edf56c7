"""OpenCompass's RawPromptTemplate: messages given directly reach a chat model as written, filled once."""
from __future__ import annotations

import pytest

from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder
from promptweave.errors import TemplateError, UnsupportedError

TRAIN = [{"q": "1+1", "a": "2"}, {"q": "2+2", "a": "4"}]
TEST = [{"q": "What is {a}? 3+3", "a": "6"}]


def spec(prompt: dict, ice: dict | None = None, retriever: dict | None = None) -> DatasetSpec:
    infer = {"prompt_template": prompt, "retriever": retriever or {"type": "ZeroRetriever"},
             "inferencer": {"type": "GenInferencer"}}
    if ice:
        infer["ice_template"] = ice
    return DatasetSpec.from_config({"abbr": "d", "reader_cfg": {"input_columns": ["q"], "output_column": "a"},
                                    "infer_cfg": infer}, train=TRAIN, test=TEST)


API = ModelSpec.from_config({"abbr": "api", "type": "OpenAISDK"})


def test_messages_reach_a_chat_model_as_written() -> None:
    ds = spec({"type": "RawPromptTemplate", "messages": [
        {"role": "system", "content": "You are exact."},
        {"role": "user", "content": "{q}\nRemember to put your final answer within \\boxed{}."}]})
    [rec] = PromptBuilder(ds, API).build_row(0)
    roles = [m.get("role") for m in rec.rendered]
    texts = [m.get("prompt", m.get("content")) for m in rec.rendered]
    assert roles == ["SYSTEM", "HUMAN"] or roles == ["system", "user"]
    # the row value is inserted once: its own braces stay as written
    assert texts == ["You are exact.", "What is {a}? 3+3\nRemember to put your final answer within \\boxed{}."]


def test_ice_token_element_takes_the_examples_messages() -> None:
    ds = spec({"type": "RawPromptTemplate", "messages": ["</E>", {"role": "user", "content": "{q}"}]},
              ice={"type": "RawPromptTemplate", "messages": [{"role": "user", "content": "{q}"},
                                                             {"role": "assistant", "content": "{a}"}]},
              retriever={"type": "FixKRetriever", "fix_id_list": [0, 1]})
    [rec] = PromptBuilder(ds, API).build_row(0)
    texts = [m.get("prompt", m.get("content")) for m in rec.rendered]
    assert texts == ["1+1", "2", "2+2", "4", "What is {a}? 3+3"]


def test_text_models_get_the_messages_through_their_meta_template() -> None:
    lm = ModelSpec.from_config({"abbr": "lm", "type": "HuggingFaceBaseModel", "meta_template": {"round": [
        {"role": "HUMAN", "begin": "<u>", "end": "</u>"}, {"role": "BOT", "begin": "<b>", "generate": True}]}})
    ds = spec({"type": "RawPromptTemplate", "messages": [{"role": "user", "content": "{q}"},
                                                         {"role": "assistant", "content": ""}]})
    [rec] = PromptBuilder(ds, lm).build_row(0)
    assert rec.rendered == "<u>What is {a}? 3+3</u><b>"


@pytest.mark.parametrize("messages, err, field", [
    ("just text", TemplateError, "messages"),
    ([{"role": "critic", "content": "x"}], TemplateError, "messages[0].role"),
    ([{"role": "user"}], TemplateError, "messages[0].content"),
    ([{"expand_column": 3}], TemplateError, "messages[0].expand_column"),
    ([{"role": "user", "content": ["part"]}], UnsupportedError, "messages[0].content"),
])
def test_malformed_messages_are_typed_errors(messages, err, field) -> None:
    with pytest.raises(err) as exc:
        spec({"type": "RawPromptTemplate", "messages": messages})
    assert exc.value.field == f"dataset.infer_cfg.prompt_template.{field}"


def test_expand_column_splices_the_rows_messages_in() -> None:
    rows = [{"q": "last {a}", "history": [{"role": "user", "content": "hi {q}"},
                                          {"role": "assistant", "content": "hello"}]},
            {"q": "again", "history": [{"role": "user", "content": "be kind"}, {"role": "assistant", "content": "ok"}]}]
    ds = DatasetSpec.from_config({"abbr": "d", "reader_cfg": {"input_columns": ["q", "history"]}, "infer_cfg": {
        "prompt_template": {"type": "RawPromptTemplate", "messages": [
            {"role": "system", "content": "S"}, {"expand_column": "history"}, {"role": "user", "content": "{q}"}]},
        "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}}, train=rows, test=rows)
    b = PromptBuilder(ds, API)
    got = [[(m["role"], m["prompt"]) for m in r.rendered] for r in b.build_all()]
    # history text is inserted as written (its braces are not placeholders); each row has its own turns
    assert got[0] == [("SYSTEM", "S"), ("HUMAN", "hi {q}"), ("BOT", "hello"), ("HUMAN", "last {a}")]
    assert got[1] == [("SYSTEM", "S"), ("HUMAN", "be kind"), ("BOT", "ok"), ("HUMAN", "again")]


def test_expand_column_must_hold_messages() -> None:
    from promptweave.errors import DataError

    rows = [{"q": "x", "history": "not a list"}]
    ds = DatasetSpec.from_config({"abbr": "d", "reader_cfg": {"input_columns": ["q", "history"]}, "infer_cfg": {
        "prompt_template": {"type": "RawPromptTemplate", "messages": [{"expand_column": "history"}]},
        "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}}, train=rows, test=rows)
    with pytest.raises(DataError, match="history"):
        PromptBuilder(ds, API).build(0)
