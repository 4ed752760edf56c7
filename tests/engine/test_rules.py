"""The template and meta-template rules, each on a small hand-written case."""
import numpy as np
import pytest

from promptweave.errors import MetaTemplateError, PromptweaveWarning, RoleError, TemplateError
from tests.helpers import API_META, CHATML, both_paths, make_builder

ROWS = [{"question": "2+2?", "answer": "4"}, {"question": "3+3?", "answer": "6"}, {"question": "1+1?", "answer": "2"}]
DIALOGUE = {"round": [{"role": "HUMAN", "prompt": "Q: {question}"}, {"role": "BOT", "prompt": "A: {answer}"}]}


def gen_cfg(template, **extra):
    return {"prompt_template": {"type": "PromptTemplate", "template": template, **extra},
            "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}


def test_string_template_masks_the_answer_in_gen():
    with pytest.warns(PromptweaveWarning, match="missing"):
        got = both_paths(gen_cfg("Q: {question}\nA: {answer} {missing}"), ROWS)
    assert got == "Q: 2+2?\nA:  {missing}"


def test_gen_stops_at_generate_role_begin_and_drops_meta_end():
    meta = dict(CHATML, begin="<s>", end="</s>")
    assert both_paths(gen_cfg(DIALOGUE), ROWS, meta=meta) == "<s><u>Q: 2+2?</u>\n<a>"


def test_ppl_never_stops_early_and_keeps_meta_end():
    cfg = gen_cfg(DIALOGUE)
    cfg["inferencer"] = {"type": "PPLInferencer", "labels": ["x"]}
    meta = dict(CHATML, begin="<s>", end="</s>")
    assert both_paths(cfg, ROWS, meta=meta, label="x") == "<s><u>Q: 2+2?</u>\n<a>A: 4</a>\n</s>"


def test_no_meta_joins_non_empty_items_with_newlines():
    assert both_paths(gen_cfg(DIALOGUE), ROWS) == "Q: 2+2?\nA: "
    only_slot = {"round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]}
    # the masked answer is empty, so it adds nothing (no trailing newline)
    assert both_paths(gen_cfg(only_slot), ROWS) == "2+2?"


def test_no_meta_empty_first_item_still_counts():
    tpl = {"begin": [""], "round": [{"role": "HUMAN", "prompt": "{question}"}]}
    assert both_paths(gen_cfg(tpl), ROWS) == "\n2+2?"


def test_rounds_split_when_role_order_restarts_and_missing_roles_render_empty():
    tpl = {"round": [{"role": "HUMAN", "prompt": "a"}, {"role": "HUMAN", "prompt": "b"},
                     {"role": "BOT", "prompt": "c"}, {"role": "HUMAN", "prompt": "d"}]}
    cfg = gen_cfg(tpl)
    cfg["inferencer"] = {"type": "PPLInferencer", "labels": ["x"]}
    got = both_paths(cfg, ROWS, meta=CHATML, label="x")
    assert got == "<u>a</u>\n<a></a>\n<u>b</u>\n<a>c</a>\n<u>d</u>\n<a></a>\n"


def test_reserved_and_fallback_roles_in_begin_section():
    meta = dict(CHATML, reserved_roles=[{"role": "SYSTEM", "begin": "<sys>", "end": "</sys>\n"}])
    tpl = {"begin": [{"role": "SYSTEM", "prompt": "be brief"}, {"role": "CRITIC", "fallback_role": "HUMAN",
                                                                 "prompt": "hm"}],
           "round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]}
    assert both_paths(gen_cfg(tpl), ROWS, meta=meta) == "<sys>be brief</sys>\n<u>hm</u>\n<u>2+2?</u>\n<a>"


def test_unknown_role_without_fallback_is_a_role_error():
    tpl = {"begin": [{"role": "CRITIC", "prompt": "hm"}], "round": [{"role": "HUMAN", "prompt": "{question}"}]}
    with pytest.raises(RoleError) as e:
        make_builder(gen_cfg(tpl), ROWS, meta=CHATML).build(0)
    assert "CRITIC" in str(e.value) and "fallback_role" in str(e.value)


def test_text_models_do_not_use_fallback_inside_rounds_but_chat_models_do():
    tpl = {"round": [{"role": "USER", "fallback_role": "HUMAN", "prompt": "{question}"},
                     {"role": "BOT", "prompt": "{answer}"}]}
    with pytest.raises(RoleError):
        make_builder(gen_cfg(tpl), ROWS, meta=CHATML).build(0)
    assert both_paths(gen_cfg(tpl), ROWS, meta=API_META, kind="api") == [{"role": "HUMAN", "prompt": "2+2?"}]


def test_chat_merges_same_role_and_puts_meta_begin_first():
    meta = {"begin": {"role": "SYSTEM", "api_role": "SYSTEM", "prompt": "sys"},
            "round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "SYSTEM", "api_role": "HUMAN"},
                      {"role": "BOT", "api_role": "BOT", "generate": True}]}
    tpl = {"round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT", "prompt": "{answer}"}]}
    got = both_paths(gen_cfg(tpl), ROWS, meta=meta, kind="api")
    assert got == [{"role": "SYSTEM", "api_role": "SYSTEM", "prompt": "sys"}, {"role": "HUMAN", "prompt": "2+2?\n"}]


def test_chat_keeps_non_generate_bot_and_passes_strings_through():
    meta = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT"}]}
    got = both_paths(gen_cfg(DIALOGUE), ROWS, meta=meta, kind="api")
    assert got == [{"role": "HUMAN", "prompt": "Q: 2+2?"}, {"role": "BOT", "prompt": "A: "}]
    assert both_paths(gen_cfg("plain {question}"), ROWS, meta=meta, kind="api") == "plain 2+2?"


def fixk(ice_template, prompt_template=None, ids=(1, 2), **retr):
    cfg = {"ice_template": {"type": "PromptTemplate", **ice_template},
           "retriever": {"type": "FixKRetriever", "fix_id_list": list(ids), **retr},
           "inferencer": {"type": "GenInferencer"}}
    if prompt_template is not None:
        cfg["prompt_template"] = {"type": "PromptTemplate", **prompt_template}
    return cfg


def test_string_examples_joined_with_separator_and_eos():
    cfg = fixk({"template": "Q: {question} A: {answer}"},
               {"template": "</E>Q: {question} A:", "ice_token": "</E>"})
    assert both_paths(cfg, ROWS) == "Q: 3+3? A: 6\nQ: 1+1? A: 2\nQ: 2+2? A:"
    cfg = fixk({"template": "{question}={answer}"}, {"template": "</E>{question}=", "ice_token": "</E>"},
               ice_separator=" | ", ice_eos_token=" || ")
    assert both_paths(cfg, ROWS) == "3+3?=6 | 1+1?=2 || 2+2?="


def test_only_ice_template_shorthand_with_dialogue_examples():
    ice = {"template": {"begin": "</E>", "round": DIALOGUE["round"]}, "ice_token": "</E>"}
    got = both_paths(fixk(ice), ROWS, meta=CHATML)
    assert got == "<u>Q: 3+3?</u>\n<a>A: 6</a>\n<u>Q: 1+1?</u>\n<a>A: 2</a>\n<u>Q: 2+2?</u>\n<a>"


def test_label_dict_ice_template_picks_by_train_label():
    rows = [{"question": "a", "answer": "yes"}, {"question": "b", "answer": "no"}, {"question": "c", "answer": "yes"}]
    ice = {"template": {"yes": "</E>{question}: Y", "no": "</E>{question}: N"}, "ice_token": "</E>"}
    cfg = fixk(ice, ids=(0, 1))
    cfg["inferencer"] = {"type": "PPLInferencer"}
    b = make_builder(cfg, rows)
    assert b.labels() == ["yes", "no"]
    assert b.build(2, "no").rendered == "a: Y\nb: N\nc: N"


def test_sep_token_removed_in_gen_kept_in_examples_for_ppl():
    ice = {"template": "{question}<SEP>{answer}", "sep_token": "<SEP>"}
    pt = {"template": "</E>{question}<SEP>{answer}", "ice_token": "</E>", "sep_token": "<SEP>"}
    cfg = fixk(ice, pt, ids=(1,))
    assert both_paths(cfg, ROWS) == "3+3?6\n2+2?"
    cfg["inferencer"] = {"type": "PPLInferencer", "labels": ["x"]}
    assert both_paths(cfg, ROWS, label="x") == "3+3?<SEP>6\n2+2?4"


def test_zero_retriever_eos_is_empty():
    cfg = {"ice_template": {"type": "PromptTemplate", "template": "</E>{question}", "ice_token": "</E>"},
           "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}
    assert both_paths(cfg, ROWS) == "2+2?"


def test_random_retriever_matches_numpy_legacy_draws():
    train = [{"question": f"t{i}", "answer": str(i)} for i in range(10)]
    cfg = fixk({"template": "{answer}"}, {"template": "</E>|{question}", "ice_token": "</E>"})
    cfg["retriever"] = {"type": "RandomRetriever", "ice_num": 3, "seed": 5}
    b = make_builder(cfg, ROWS, train=train)
    np.random.seed(5)
    expected = [np.random.choice(10, 3, replace=False).tolist() for _ in ROWS]
    assert b.shot_ids == expected
    assert b.build(1).rendered == "\n".join(str(i) for i in expected[1]) + "\n|3+3?"


def test_token_ids_in_meta_become_segments():
    meta = {"begin": ["<bos>", 1], "round": [{"role": "HUMAN", "begin": [5, "U:"], "end": "\n"},
                                             {"role": "BOT", "begin": "A:", "generate": True}]}
    got = make_builder(gen_cfg(DIALOGUE), ROWS, meta=meta).build(0).rendered
    assert got == ["<bos>", [1], [5], "U:Q: 2+2?\nA:"]


def test_adversarial_values_appear_literally():
    rows = [{"question": "{answer} {question} </E> {0.__class__}", "answer": "SECRET"}]
    ice = {"template": {"begin": "</E>", "round": DIALOGUE["round"]}, "ice_token": "</E>"}
    cfg = fixk(ice, ids=(0,))
    got = both_paths(cfg, rows, meta=CHATML)
    assert got == ("<u>Q: {answer} {question} </E> {0.__class__}</u>\n<a>A: SECRET</a>\n"
                   "<u>Q: {answer} {question} </E> {0.__class__}</u>\n<a>")


def test_missing_generate_role_warns_in_gen_mode():
    meta = {"round": [{"role": "HUMAN", "begin": "U:"}, {"role": "BOT", "begin": "A:"}]}
    with pytest.warns(PromptweaveWarning, match="generate=True"):
        make_builder(gen_cfg(DIALOGUE), ROWS, meta=meta)


def test_column_absent_from_every_row_warns():
    with pytest.warns(PromptweaveWarning, match=r"\{nope\}"):
        make_builder(gen_cfg("{question} {nope}"), ROWS)


def test_prompt_template_without_ice_token_next_to_ice_template_is_an_error():
    with pytest.raises(TemplateError) as e:
        make_builder(fixk({"template": "{question}"}, {"template": "{question}"}), ROWS)
    assert "prompt_template.ice_token" in str(e.value)


def test_examples_retrieved_but_nowhere_to_go_are_left_out_with_a_warning():
    # OpenCompass fills such a template as it is: the examples are not shown (issue 11's fidelity case)
    ice = {"template": {"round": DIALOGUE["round"]}, "ice_token": "</E>"}
    with pytest.warns(PromptweaveWarning):
        b = make_builder(fixk(ice), ROWS, meta=CHATML)
    with pytest.warns(PromptweaveWarning, match="2 in-context examples were retrieved .* built without them"):
        rec = b.build(0)
    assert rec.rendered == "<u>Q: 2+2?</u>\n<a>" and rec.shot_ids == [1, 2]
    labels = {lab: {"round": [{"role": "HUMAN", "prompt": "Q: {question}"}, {"role": "BOT", "prompt": lab}]}
              for lab in "45"}
    ppl = fixk({"template": DIALOGUE}, {"template": labels, "ice_token": "</E>"})
    ppl["inferencer"] = {"type": "PPLInferencer"}
    with pytest.warns(PromptweaveWarning):
        got = both_paths(ppl, ROWS, meta=CHATML, label="5")
    assert got == "<u>Q: 2+2?</u>\n<a>5</a>\n"


def test_meta_template_validation_names_fields():
    with pytest.raises(MetaTemplateError) as e:
        make_builder(gen_cfg(DIALOGUE), ROWS, meta={"round": {"role": "HUMAN"}})
    assert "meta_template.round" in str(e.value)
    with pytest.raises(MetaTemplateError) as e:
        make_builder(gen_cfg(DIALOGUE), ROWS, meta={"round": [{"role": "HUMAN"}]}, kind="api")
    assert "meta_template.round[0].api_role" in str(e.value)
