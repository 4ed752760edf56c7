"""Multi-turn prompts and the MultiTurnGenInferencer (model: a scripted test double unless said otherwise)."""
from __future__ import annotations

import warnings

import pytest

from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder
from promptweave.errors import DataError, ModelError, PromptweaveWarning, TemplateError
from promptweave.forms.turn_loop import (
    MultiTurnGenInferencer,
    as_generate,
    read_predictions,
    score,
    scripted,
    turn_prompts,
    write_predictions,
)
from promptweave.models.base import GenerationParams

CHATML = {
    "round": [{"role": "HUMAN", "begin": "<|user|>", "end": "\n"},
              {"role": "BOT", "begin": "<|bot|>", "end": "\n", "generate": True}],
    "reserved_roles": [{"role": "SYSTEM", "begin": "<|sys|>", "end": "\n"}],
}
CHAT = {
    "round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}],
    "reserved_roles": [{"role": "SYSTEM", "api_role": "SYSTEM"}],
}
ROUND = [{"role": "HUMAN", "prompt": "Q: {question}"}, {"role": "BOT", "prompt": "A: {answer}"}]
ROWS = [
    {"question": ["q0", "q1", "q2"], "answer": ["a0", "a1", "a2"]},
    {"question": ["r0", "r1"], "answer": ["b0", "b1"]},
]


def dataset(rows=ROWS, template=None, mode="every"):
    cfg = {
        "abbr": "mt",
        "reader_cfg": {"input_columns": ["question", "answer"], "output_column": "answer"},
        "infer_cfg": {
            "prompt_template": {"type": "MultiTurnPromptTemplate", "template": template or {"round": ROUND}},
            "retriever": {"type": "ZeroRetriever"},
            "inferencer": {"type": "MultiTurnGenInferencer", "infer_mode": mode},
        },
    }
    return DatasetSpec.from_config(cfg, train=rows, test=rows, file="mt.py", check_columns=False)


def lm(meta=CHATML, **kw):
    return ModelSpec.from_config({"kind": "lm", "meta_template": meta, "abbr": "tiny", **kw})


def chat(meta=CHAT):
    return ModelSpec.from_config({"kind": "api", "meta_template": meta, "abbr": "chat"})


def run(ds, model, replies, rows=None, **kw):
    got = []
    inf = MultiTurnGenInferencer(ds, model, scripted(replies, got), **kw)
    return inf.run(rows), got


# --------------------------------------------------------------------------- infer modes
def test_every_history_holds_the_models_own_replies_text_model():
    (res,), prompts = run(dataset(), lm(), ["m0", "m1", "m2"], [0])
    assert prompts == [
        "<|user|>Q: q0\n<|bot|>",
        "<|user|>Q: q0\n<|bot|>m0\n<|user|>Q: q1\n<|bot|>",
        "<|user|>Q: q0\n<|bot|>m0\n<|user|>Q: q1\n<|bot|>m1\n<|user|>Q: q2\n<|bot|>",
    ]
    assert [t.prediction for t in res.turns] == ["m0", "m1", "m2"]
    assert [t.gold for t in res.turns] == ["a0", "a1", "a2"]


def test_every_with_gt_history_holds_ground_truth_chat_model():
    (res,), prompts = run(dataset(mode="every_with_gt"), chat(), ["m0", "m1"], [1])
    assert prompts == [
        [{"role": "HUMAN", "prompt": "Q: r0"}],
        [{"role": "HUMAN", "prompt": "Q: r0"}, {"role": "BOT", "prompt": "A: b0"}, {"role": "HUMAN", "prompt": "Q: r1"}],
    ]
    assert [t.reference_record() for t in res.turns] == [
        {"turn_id": 0, "success": True, "prediction": "m0"}, {"turn_id": 1, "success": True, "prediction": "m1"}]


def test_last_is_one_call_with_every_answer_but_the_last():
    (res,), prompts = run(dataset(mode="last"), lm(meta=None), ["only"], [0])
    assert prompts == ["Q: q0\nA: a0\nQ: q1\nA: a1\nQ: q2"]
    assert len(res.turns) == 1 and res.turns[0].gold == "a2"


def test_infer_mode_argument_overrides_the_config():
    (res,), prompts = run(dataset(mode="every"), chat(), ["x"], [1], infer_mode="last")
    assert len(prompts) == 1 and prompts[0][-1] == {"role": "HUMAN", "prompt": "Q: r1"}


def test_a_failed_request_stops_the_row_but_not_the_others():
    calls = []

    def model(prompts):  # test double: fails row 0's second request
        calls.append(len(prompts))
        return [None if (isinstance(p, str) and "Q: q1" in p and "Q: q2" not in p) else "ok" for p in prompts]

    inf = MultiTurnGenInferencer(dataset(), lm(meta=None), model)
    r0, r1 = inf.run()
    assert [t.success for t in r0.turns] == [True, False]
    assert r0.turns[1].prediction == "" and r0.turns[1].error == "request failed"
    assert [t.success for t in r1.turns] == [True, True]
    assert calls == [2, 2]  # turn k of every running row goes in one batch


def test_a_raising_model_fails_its_batch_with_the_error_recorded():
    def model(prompts):  # test double for a backend that errors
        raise ConnectionError("refused")

    (res,) = MultiTurnGenInferencer(dataset(), lm(), model).run([0])
    assert len(res.turns) == 1 and not res.turns[0].success
    assert "ConnectionError: refused" in res.turns[0].error


def test_batch_size_splits_a_wave():
    sizes = []

    def model(prompts):
        sizes.append(len(prompts))
        return ["r"] * len(prompts)

    rows = [{"question": [f"q{i}"], "answer": ["a"]} for i in range(5)]
    MultiTurnGenInferencer(dataset(rows), lm(), model, batch_size=2).run()
    assert sizes == [2, 2, 1]


def test_begin_and_end_sections_are_used_as_written_and_system_falls_back():
    tpl = {"begin": [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "Topic {topic}."}],
           "round": ROUND,
           "end": [{"role": "SYSTEM", "fallback_role": "HUMAN", "prompt": "End."}]}
    rows = [{"question": ["q0", "q1"], "answer": ["a0", "a1"], "topic": "cats"}]
    _, prompts = run(dataset(rows, tpl, "every_with_gt"), lm(meta=None), ["x", "y"])
    assert prompts == ["Topic {topic}.\nQ: q0\nEnd.", "Topic {topic}.\nQ: q0\nA: a0\nQ: q1\nEnd."]
    nosys = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}],
             "reserved_roles": [{"role": "SYSTEM", "api_role": "HUMAN"}]}
    _, prompts = run(dataset(rows, {"begin": tpl["begin"], "round": ROUND}, "last"), chat(nosys), ["x"])
    assert prompts[0][0] == {"role": "HUMAN", "prompt": "Topic {topic}.\nQ: q0"}


def test_two_human_items_per_round_make_separate_rounds():
    tpl = {"round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "HUMAN", "prompt": "Be brief."},
                     {"role": "BOT", "prompt": "{answer}"}]}
    rows = [{"question": ["q0", "q1"], "answer": ["a0", "a1"]}]
    _, prompts = run(dataset(rows, tpl, "every_with_gt"), lm(), ["x", "y"])
    assert prompts[1] == "<|user|>q0\n<|bot|>\n<|user|>Be brief.\n<|bot|>a0\n<|user|>q1\n<|bot|>\n<|user|>Be brief.\n<|bot|>"


def test_values_and_replies_are_never_read_as_template_syntax():
    rows = [{"question": ["first {answer}", "second"], "answer": ["gt {question}", "x"]}]
    _, prompts = run(dataset(rows, mode="every"), lm(meta=None), ["reply {question}", "z"])
    assert prompts == ["Q: first {answer}", "Q: first {answer}\nreply {question}\nQ: second"]


# --------------------------------------------------------------------------- bad input
def test_lists_of_different_length_warn_naming_the_row_and_use_the_shorter():
    rows = [{"question": ["q0"], "answer": ["a0"]}, {"question": ["q0", "q1", "q2"], "answer": ["a0", "a1"]}]
    with pytest.warns(PromptweaveWarning, match=r"test\[1\].*3 question\(s\) but 2 answer\(s\)"):
        (res,), prompts = run(dataset(rows, mode="every_with_gt"), lm(), ["x", "y", "z"], [1])
    assert len(res.turns) == 2


def test_strict_makes_a_length_mismatch_a_typed_error():
    rows = [{"question": ["q0", "q1"], "answer": ["a0"]}]
    with pytest.raises(DataError) as e:
        run(dataset(rows), lm(), ["x"], strict=True)
    assert e.value.field == "test[0].answer" and e.value.file == "mt.py"


@pytest.mark.parametrize("row,column", [({"question": "not a list", "answer": ["a"]}, "question"),
                                        ({"question": ["q"]}, "answer")])
def test_a_row_without_lists_is_a_typed_error_naming_row_and_column(row, column):
    rows = [{"question": ["q"], "answer": ["a"]}, row]
    with pytest.raises(DataError) as e:
        run(dataset(rows), lm(), ["x"], [1])
    assert e.value.field == f"test[1].{column}"


def test_string_items_and_rounds_without_bot_are_rejected():
    with pytest.raises(TemplateError) as e:
        dataset(template={"begin": "You are nice.", "round": ROUND})
    assert e.value.field.endswith("template.begin")
    with pytest.raises(TemplateError, match="BOT"):
        dataset(template={"round": [{"role": "HUMAN", "prompt": "{question}"}]})
    with pytest.raises(TemplateError, match="prompt"):
        dataset(template={"round": [{"role": "HUMAN", "prompt": "{question}"}, {"role": "BOT"}]})


def test_unknown_infer_mode_is_rejected():
    with pytest.raises(TemplateError, match="infer_mode"):
        MultiTurnGenInferencer(dataset(mode="sometimes"), lm())


def test_single_turn_builder_refuses_a_multi_turn_template():
    with pytest.raises(TemplateError, match="MultiTurnGenInferencer"):
        PromptBuilder(dataset(), lm()).build(0)


def test_bad_replies_are_model_errors():
    with pytest.raises(ModelError, match="2 prompts"):
        MultiTurnGenInferencer(dataset(), lm(), lambda ps: ["one"]).run()
    with pytest.raises(ModelError, match="string"):
        MultiTurnGenInferencer(dataset(), lm(), lambda ps: [1 for _ in ps]).run()


# --------------------------------------------------------------------------- viewing, predictions, scores
def test_turn_prompts_for_view_marks_missing_replies():
    views = turn_prompts(dataset(), lm(meta=None), 1)
    assert [v.rendered for v in views] == ["Q: r0", "Q: r0\n<model reply to turn 0>\nQ: r1"]
    views = turn_prompts(dataset(), lm(meta=None), 1, infer_mode="every_with_gt")
    assert views[1].rendered == "Q: r0\nA: b0\nQ: r1" and views[1].gold == "b1"


def test_predictions_are_written_per_turn_and_scored_per_turn_or_conversation(tmp_path):
    # replies go out in waves: turn 0 of both rows, then turn 1 of both, then turn 2 of row 0
    results, _ = run(dataset(mode="every_with_gt"), lm(), ["a0", "b0", "wrong", "b1", "a2"])
    path = tmp_path / "pred.jsonl"
    assert write_predictions(results, path) == 5
    back = read_predictions(path)
    assert [(t.index, t.turn_id, t.prediction, t.gold) for c in back for t in c.turns] == [
        (0, 0, "a0", "a0"), (0, 1, "wrong", "a1"), (0, 2, "a2", "a2"), (1, 0, "b0", "b0"), (1, 1, "b1", "b1")]
    exact = lambda p, g: float(p == g)  # noqa: E731
    per_turn = score(back, exact)
    assert per_turn["score"] == pytest.approx(4 / 5) and per_turn["by_turn"] == {0: 1.0, 1: 0.5, 2: 1.0}
    assert score(back, exact, per="conversation")["score"] == pytest.approx((2 / 3 + 1) / 2)
    assert score(back, exact, per="conversation", reduce="all")["score"] == 0.5


class _EchoChat:
    """Test double with the ChatModel protocol: echoes the last user message."""

    name = "echo"

    def __init__(self):
        self.seen = []

    def chat(self, conversations, params):
        self.seen.extend(conversations)
        return [c[-1]["content"].upper() for c in conversations]


def test_a_chat_model_gets_openai_messages():
    model = _EchoChat()
    (res,) = MultiTurnGenInferencer(dataset(), chat(), model, params=GenerationParams(max_out_len=8)).run([1])
    assert [t.prediction for t in res.turns] == ["Q: R0", "Q: R1"]
    assert model.seen[1] == [{"role": "user", "content": "Q: r0"}, {"role": "assistant", "content": "Q: R0"},
                             {"role": "user", "content": "Q: r1"}]
    assert callable(as_generate(model))


def test_no_stray_warnings_for_well_formed_rows():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(dataset(), lm(), ["a"] * 5)
