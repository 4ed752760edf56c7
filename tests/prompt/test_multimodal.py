"""Multimodal prompts: content segments, prompt_mm parts, chat and text renderings, bad input."""
from __future__ import annotations

import base64
import warnings

import pytest

from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder
from promptweave.errors import DataError, PromptweaveWarning, TemplateError
from promptweave.prompt.dialogue import ContentPart
from promptweave.prompt.multimodal import build_content, data_url, part_label, split_content
from promptweave.render.chat import to_openai_messages

MM_URL_DICT = {
    "text": {"type": "text", "text": "{question}"},
    "image": {"type": "image_url", "image_url": {"url": "file://{image}", "detail": "low"}},
    "video": {"type": "video_url", "video_url": {"url": "file://{video}"}},
    "audio": {"type": "audio_url", "audio_url": {"url": "file://{audio}"}},
}
CHAT = {
    "round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}],
    "reserved_roles": [{"role": "SYSTEM", "api_role": "SYSTEM"}],
}
CHATML = {
    "round": [{"role": "HUMAN", "begin": "<|user|>", "end": "\n"},
              {"role": "BOT", "begin": "<|bot|>", "end": "\n", "generate": True}],
    "reserved_roles": [{"role": "SYSTEM", "begin": "<|sys|>", "end": "\n"}],
}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 59).decode()  # 67 bytes


def dataset(rows, mm=None, begin=None, round_extra=(), template=None):
    tpl = template or {"round": [{"role": "HUMAN", "prompt_mm": MM_URL_DICT if mm is None else mm}, *round_extra]}
    if begin is not None:
        tpl["begin"] = begin
    cfg = {"abbr": "mm", "reader_cfg": {"input_columns": ["question"], "output_column": "answer"},
           "infer_cfg": {"prompt_template": {"type": "MMPromptTemplate", "template": tpl},
                         "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}}
    return DatasetSpec.from_config(cfg, train=rows, test=rows, file="mm.py", check_columns=False)


def model(kind, meta, **kw):
    return ModelSpec.from_config({"kind": kind, "meta_template": meta, "abbr": "m", **kw})


def build(rows, m, i=0, **kw):
    return PromptBuilder(dataset(rows, **kw), m).build(i).rendered


def row(*parts):
    return {"content": build_content(parts), "answer": "gold"}


# --------------------------------------------------------------------------- segments
def test_split_content_keeps_order_and_accepts_a_missing_trailing_tag():
    segs = split_content("<AIS_IMAGE_START>a.png<AIS_CONTENT_TAG><AIS_TEXT_START>What?")
    assert [(s.modality, s.payload) for s in segs] == [("image", "a.png"), ("text", "What?")]
    assert split_content("") == []


def test_build_content_round_trips():
    parts = [("audio", "x.wav"), ("video", "y.mp4"), ("text", "hi")]
    assert [(s.modality, s.payload) for s in split_content(build_content(parts))] == parts


@pytest.mark.parametrize("modality,key,url", [("image", "image_url", "file:///img/cat.png"),
                                              ("video", "video_url", "file:///v/clip.mp4"),
                                              ("audio", "audio_url", "file:///a/bark.wav")])
def test_each_modality_becomes_its_part_type_for_chat_models(modality, key, url):
    rows = [row((modality, url[7:]), ("text", "What is it?"))]
    msgs = build(rows, model("api", CHAT))
    assert msgs == [{"role": "HUMAN", "prompt": [{"type": key, key: {"url": url, **({"detail": "low"} if modality == "image" else {})}},
                                                  {"type": "text", "text": "What is it?"}]}]
    assert to_openai_messages(msgs)[0]["content"][1] == {"type": "text", "text": "What is it?"}


@pytest.mark.parametrize("template,payload,want", [
    ("{image}", "https://example.org/cat.png", "https://example.org/cat.png"),          # URL
    ("file://{image}", "/data/cat.png", "file:///data/cat.png"),                        # file
    ("data:image/png;base64,{image}", PNG, f"data:image/png;base64,{PNG}"),             # base64
])
def test_url_file_and_base64_data_forms(template, payload, want):
    mm = {"image": {"type": "image_url", "image_url": template}, "text": {"type": "text", "text": "Q: {question}"}}
    msgs = build([row(("image", payload), ("text", "hi"))], model("api", CHAT), mm=mm)
    assert msgs[0]["prompt"] == [{"type": "image_url", "image_url": want}, {"type": "text", "text": "Q: hi"}]


def test_content_and_template_braces_are_filled_in_one_pass():
    mm = {"text": {"type": "text", "text": "{question} ({question}) {hint}"},
          "image": {"type": "image_url", "image_url": {"url": "file://{image}"}}}
    with pytest.warns(PromptweaveWarning, match=r"\{hint\} stays as written"):
        ds = dataset([row(("image", "/i/{question}.png"), ("text", "seg {image}"))], mm=mm)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, at load time
        parts = PromptBuilder(ds, model("api", CHAT)).build(0).rendered[0]["prompt"]
    assert parts == [{"type": "image_url", "image_url": {"url": "file:///i/{question}.png"}},
                     {"type": "text", "text": "seg {image} (seg {image}) {hint}"}]


# --------------------------------------------------------------------------- roles and merging
def test_system_mapped_onto_human_merges_text_with_the_parts_list():
    nosys = {"round": CHAT["round"], "reserved_roles": [{"role": "SYSTEM", "api_role": "HUMAN"}]}
    begin = [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Describe precisely."}]
    msgs = build([row(("image", "/a.png"), ("text", "What?"))], model("api", nosys), begin=begin)
    assert msgs == [{"role": "HUMAN", "prompt": [
        {"type": "text", "text": "Describe precisely."},
        {"type": "image_url", "image_url": {"url": "file:///a.png", "detail": "low"}},
        {"type": "text", "text": "What?"}]}]
    assert to_openai_messages(msgs) == [{"role": "user", "content": msgs[0]["prompt"]}]


def test_a_system_turn_stays_its_own_message_when_the_model_has_a_system_role():
    begin = [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Describe precisely."}]
    msgs = build([row(("text", "What?"))], model("api", CHAT), begin=begin)
    assert msgs == [{"role": "SYSTEM", "prompt": "Describe precisely."},
                    {"role": "HUMAN", "prompt": [{"type": "text", "text": "What?"}]}]


def test_turn_prompts_are_not_filled_but_plain_strings_are():
    tpl = {"begin": ["Row {idx}:"], "round": [{"role": "HUMAN", "prompt_mm": MM_URL_DICT},
                                              {"role": "BOT", "prompt": "{answer}"}]}
    with pytest.warns(PromptweaveWarning, match=r"\{answer\} stays as written"):
        ds = dataset([dict(row(("text", "hi")), idx=7)], template=tpl)
    out = PromptBuilder(ds, model("api", None)).build(0).rendered
    assert out == [{"type": "text", "text": "Row 7:"}, {"type": "text", "text": "hi"}, {"type": "text", "text": "{answer}"}]


# --------------------------------------------------------------------------- text models and plain API models
def test_text_models_get_placeholders_and_one_warning_by_default():
    rows = [row(("image", "/a.png"), ("text", "What?")), row(("audio", "/b.wav"), ("text", "Who?"))]
    b = PromptBuilder(dataset(rows), model("lm", CHATML))
    with pytest.warns(PromptweaveWarning, match="placeholder") as caught:
        first, second = b.build(0).rendered, b.build(1).rendered
    assert first == "<|user|><image>\nWhat?\n<|bot|>" and second == "<|user|><audio>\nWho?\n<|bot|>"
    assert len([w for w in caught if issubclass(w.category, PromptweaveWarning)]) == 1


def test_placeholders_are_configurable():
    m = model("lm", None, media_placeholders={"image": "<img>"})
    with pytest.warns(PromptweaveWarning, match="'<img>'"):
        assert build([row(("image", "/a.png"), ("video", "/v.mp4"))], m) == "<img>\n<video>"


def test_aisbench_dialect_drops_media_for_text_models_but_warns():
    m = model("lm", CHATML, dialect="aisbench")
    with pytest.warns(PromptweaveWarning, match="dropped"):
        assert build([row(("image", "/a.png"), ("text", "What?"))], m) == "<|user|>\n<|bot|>"


def test_api_model_without_meta_template_gets_one_parts_list_by_default():
    begin = ["Look:"]
    out = build([row(("image", "/a.png"))], model("api", None), template={"begin": begin, "round": [
        {"role": "HUMAN", "prompt_mm": MM_URL_DICT}]})
    assert out == [{"type": "text", "text": "Look:"},
                   {"type": "image_url", "image_url": {"url": "file:///a.png", "detail": "low"}}]


def test_aisbench_dialect_api_without_meta_prefers_text_and_warns_about_lost_parts():
    m = model("api", None, dialect="aisbench")
    assert build([row(("image", "/a.png"))], m) == [{"type": "image_url",
                                                     "image_url": {"url": "file:///a.png", "detail": "low"}}]
    with pytest.warns(PromptweaveWarning, match="dropped"):
        out = build([row(("image", "/a.png"))], m, round_extra=[{"role": "BOT", "prompt": "ok"}])
    assert out == "\nok"


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("content,match", [
    ("<AIS_PDF_START>doc.pdf<AIS_CONTENT_TAG>", "unknown modality"),
    ("<AIS_IMAGE_START>a.png<AIS_TEXT_START>What?", "CONTENT_TAG"),
    (["not", "a string"], "must be a string"),
])
def test_bad_content_is_a_typed_error_naming_row_and_column(content, match):
    rows = [row(("text", "fine")), {"content": content}]
    b = PromptBuilder(dataset(rows), model("api", CHAT))
    b.build(0)
    with pytest.raises(DataError, match=match) as e:
        b.build(1)
    assert e.value.field == "test[1].content" and e.value.file == "mm.py"


def test_a_segment_whose_modality_the_template_lacks_is_an_error():
    mm = {"text": {"type": "text", "text": "{question}"}}
    with pytest.raises(DataError, match="no 'image' part") as e:
        build([row(("image", "/a.png"))], model("api", CHAT), mm=mm)
    assert e.value.field == "test[0].content"


def test_a_missing_content_column_is_an_error():
    with pytest.raises(DataError, match="'content' column"):
        build([{"question": "q"}], model("api", CHAT))


def test_a_segment_without_marker_is_left_out_with_a_warning():
    with pytest.warns(PromptweaveWarning, match="no <AIS_..._START> marker"):
        segs = split_content("stray text<AIS_CONTENT_TAG><AIS_TEXT_START>kept", row=3)
    assert [s.payload for s in segs] == ["kept"]


@pytest.mark.parametrize("mm,match", [
    ({"pdf": {"type": "file", "file": "{pdf}"}}, "unknown modality 'pdf'"),
    ({"image": {"image_url": "{image}"}}, "'type'"),
    ({"image": {"type": "image_url", "image_url": {"detail": "low"}}}, "image_url"),
    ({}, "non-empty"),
])
def test_bad_prompt_mm_is_a_template_error(mm, match):
    with pytest.raises(TemplateError, match=match) as e:
        dataset([row(("text", "x"))], mm=mm)
    assert "prompt_mm" in e.value.field


def test_prompt_and_prompt_mm_on_one_turn_is_rejected():
    with pytest.raises(TemplateError, match="both"):
        dataset([], template={"round": [{"role": "HUMAN", "prompt": "{question}", "prompt_mm": MM_URL_DICT}]})


# --------------------------------------------------------------------------- labels for the viewer
def test_part_labels_show_kind_and_size(tmp_path):
    img = tmp_path / "tiny.png"
    img.write_bytes(base64.b64decode(PNG))
    assert part_label({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}) == \
        "[image: image/png (base64, 67 B)]"
    assert part_label(ContentPart("image_url", {"image_url": f"file://{img}"})).endswith("(67 B)]")
    assert part_label({"type": "audio_url", "audio_url": {"url": "file:///nope.wav"}}) == \
        "[audio: file:///nope.wav (missing file)]"
    assert part_label({"type": "video_url", "video_url": "https://example.org/v.mp4"}) == \
        "[video: https://example.org/v.mp4]"
    assert part_label({"type": "text", "text": "x" * 100}).endswith("...")
    assert data_url(img).startswith("data:image/png;base64,")


def test_well_formed_multimodal_rows_raise_no_warnings_for_chat_models():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build([row(("image", "/a.png"), ("text", "q"))], model("api", CHAT))


def test_prompt_mm_in_a_plain_prompt_template_fills_turn_prompts_as_usual():
    cfg = {"abbr": "p", "reader_cfg": {"input_columns": ["content", "topic"], "output_column": "answer"},
           "infer_cfg": {"prompt_template": {"type": "PromptTemplate", "template": {
               "begin": [{"role": "SYSTEM", "prompt": "Topic: {topic}"}],
               "round": [{"role": "HUMAN", "prompt_mm": MM_URL_DICT}]}},
               "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}}
    rows = [dict(row(("text", "q1")), topic="cats"), dict(row(("text", "q2")), topic="dogs")]
    ds = DatasetSpec.from_config(cfg, train=rows, test=rows, check_columns=False)
    b = PromptBuilder(ds, model("api", CHAT))
    assert b.build(1).rendered == [{"role": "SYSTEM", "prompt": "Topic: dogs"},
                                   {"role": "HUMAN", "prompt": [{"type": "text", "text": "q2"}]}]
