"""OpenCompass's LMEvaluator, end to end: `promptweave run` against the loopback stand-in server
(tests/servers/openai_stub.py) as both the evaluated model and the judge. The judge prompts the server receives are
checked byte for byte against prompts written out by hand from the reference's rules."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_stub import StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import EvaluationError, JudgeError
from promptweave.evaluate import EvalContext, build_evaluation

ROWS = [{"question": "2+2?", "answer": "4"}, {"question": "3+3?", "answer": "6"},
        {"question": "capital of France?", "answer": "Paris"}, {"question": "5*5?", "answer": "25"}]
REPLIES = {"2+2?": "It is 4.", "3+3?": "It is 7.", "capital of France?": "paris, of course", "5*5?": "25"}
# hand-counted English words of each reply (the judge template's {prediction_en_word_count})
EN_WORDS = {"It is 4.": 2, "It is 7.": 2, "paris, of course": 3, "25": 0}

_HEAD = '''
_judge = dict(abbr="judge", type="OpenAICompatModel", kind="api", base_url="{url}", model="judge-model",
              key="EMPTY", batch_size=4, backoff_base=0,
              meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                        dict(role="BOT", api_role="BOT", generate=True)]))
judge_models = [_judge]
models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
               batch_size=4, backoff_base=0,
               meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                         dict(role="BOT", api_role="BOT", generate=True)]))]
_infer = dict(
    prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", prompt="{{question}}")])),
    retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer", max_out_len=32))
'''

SINGLE = _HEAD + '''
qa = dict(
    abbr="qa", path="qa.jsonl",
    reader_cfg=dict(input_columns=["question"], output_column="answer"),
    infer_cfg=_infer,
    eval_cfg=dict(evaluator=dict(
        type="LMEvaluator",
        prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", prompt=(
            "GRADE\\nQ: {{question}}\\nPRED: {{prediction}} ({{prediction_en_word_count}} words)\\n"
            "GOLD: {{obj_gold}}|{{reference}}|\\nA or B?"))])),
        {extra}), pred_role="BOT"),
)
datasets = [qa]
'''

PAIR_ROWS = [{"question": "Say hi", "judge": {"capability": "greeting"}},
             {"question": "Count to 3", "judge": {"capability": "math"}},
             {"question": "Name a color", "judge": {"capability": "knowledge"}}]
PAIR_REPLIES = {"Say hi": "hi", "Count to 3": "1 2 3", "Name a color": "blue"}
BASE_PREDS = ["Hello there!", "one, two, three", "red"]

PAIR = _HEAD + '''
arena = dict(
    abbr="arena", path="arena.jsonl", mode="m2n", infer_order="{order}",
    base_models=[dict(abbr="gpt4-0314")], given_pred=[dict(abbr="gpt4-0314", path="{given}")],
    reader_cfg=dict(input_columns=["question"], output_column="judge"),
    infer_cfg=_infer,
    eval_cfg=dict(evaluator=dict(
        type="LMEvaluator", keep_predictions=True,
        prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", prompt=(
            "PAIR\\n{{question}}\\n<A>{{prediction}}</A>\\n<B>{{prediction2}}</B>"))]))),
        pred_role="BOT"),
)
datasets = [arena]
'''


def _judge_requests(server: StubServer) -> list[dict]:
    return [e["body"] for e in server.log if e["body"].get("model") == "judge-model"]


def _answer(body: dict) -> str:
    text = body["messages"][-1]["content"]
    if text.startswith("GRADE"):
        pred = text.split("PRED: ", 1)[1].split(" (", 1)[0]
        gold = text.split("GOLD: ", 1)[1].split("|", 1)[0]
        return "A" if gold.lower() in pred.lower() else "B"
    if text.startswith("PAIR"):
        return "[[A>B]]"
    return {**REPLIES, **PAIR_REPLIES}[text]


def _run(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-progress"])


def _single(tmp_path: Path, server: StubServer, extra: str = "") -> Path:
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cfg = tmp_path / "config.py"
    cfg.write_text(SINGLE.format(url=server.url, extra=extra))
    server.answer = _answer
    return cfg


def _expected_single(row: dict) -> str:
    pred = REPLIES[row["question"]]
    # {reference} is the judge inferencer's answer column in the reference, blanked: it renders empty
    return (f"GRADE\nQ: {row['question']}\nPRED: {pred} ({EN_WORDS[pred]} words)\n"
            f"GOLD: {row['answer']}||\nA or B?")


def test_lmevaluator_single_end_to_end_prompts_cache_and_view(stub_server: StubServer, tmp_path) -> None:
    cfg = _single(tmp_path, stub_server, 'dict_postprocessor=dict(type="generic_llmjudge_postprocess")')
    work = tmp_path / "w"
    res = _run(str(cfg), "-w", str(work))
    assert res.exit_code == 0, res.output
    sent = _judge_requests(stub_server)
    assert len(sent) == 4
    got = sorted(b["messages"][-1]["content"] for b in sent)
    assert got == sorted(_expected_single(r) for r in ROWS)
    assert all(len(b["messages"]) == 1 and b["messages"][0]["role"] == "user" for b in sent)
    result = json.loads((work / "results" / "api" / "qa.json").read_text())
    m = result["metrics"]
    assert m["accuracy"] == 75.0 and m["correct_count"] == 3 and m["incorrect_count"] == 1
    rows = [json.loads(x) for x in (work / "predictions" / "api" / "qa.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in rows] == [True, False, True, True]
    assert rows[1]["judge"]["output"] == "B" and rows[1]["judge"]["model"] == "judge"
    assert rows[1]["judge"]["prompt"] == [{"role": "HUMAN", "prompt": _expected_single(ROWS[1])}]

    before = len(stub_server.log)
    res = _run(str(cfg), "-w", str(work))
    assert res.exit_code == 0, res.output
    assert len(stub_server.log) == before  # the rerun sends nothing, the judge included
    assert json.loads((work / "results" / "api" / "qa.json").read_text())["metrics"] == m

    res = CliRunner().invoke(app, ["view", str(cfg), "--judge", str(work), "-i", "1"])
    assert res.exit_code == 0, res.output
    assert "PRED: It is 7. (2 words)" in res.output and "grade B" in res.output


def test_lmevaluator_without_dict_postprocessor_reports_no_metric(stub_server: StubServer, tmp_path) -> None:
    cfg = _single(tmp_path, stub_server)
    work = tmp_path / "w"
    res = _run(str(cfg), "-w", str(work))
    assert res.exit_code == 0, res.output
    result = json.loads((work / "results" / "api" / "qa.json").read_text())
    assert result["metrics"] == {} and "summarizer" in result["evaluation"]["note"]
    rows = [json.loads(x) for x in (work / "predictions" / "api" / "qa.jsonl").read_text().splitlines()]
    assert [r["judge"]["output"] for r in rows] == ["A", "B", "A", "A"]


def _pair(tmp_path: Path, server: StubServer, order: str, given: str = "base") -> Path:
    (tmp_path / "arena.jsonl").write_text("".join(json.dumps(r) + "\n" for r in PAIR_ROWS))
    folder = tmp_path / "base"
    folder.mkdir(exist_ok=True)
    # the reference's predictions file layout: {"0": {"prediction": ...}, ...}
    (folder / "arena.json").write_text(json.dumps({str(i): {"origin_prompt": "", "prediction": p}
                                                   for i, p in enumerate(BASE_PREDS)}))
    cfg = tmp_path / "config.py"
    cfg.write_text(PAIR.format(url=server.url, order=order, given=given))
    server.answer = _answer
    return cfg


def _pair_prompt(q: str, a: str, b: str) -> str:
    return f"PAIR\n{q}\n<A>{a}</A>\n<B>{b}</B>"


def test_lmevaluator_pairwise_double_judges_both_orders(stub_server: StubServer, tmp_path) -> None:
    cfg = _pair(tmp_path, stub_server, "double")
    work = tmp_path / "w"
    res = _run(str(cfg), "-w", str(work))
    assert res.exit_code == 0, res.output
    sent = [b["messages"][-1]["content"] for b in _judge_requests(stub_server)]
    expected = [_pair_prompt(r["question"], base, PAIR_REPLIES[r["question"]])
                for r, base in zip(PAIR_ROWS, BASE_PREDS)]
    expected += [_pair_prompt(r["question"], PAIR_REPLIES[r["question"]], base)
                 for r, base in zip(PAIR_ROWS, BASE_PREDS)]
    assert sorted(sent) == sorted(expected)
    rows = [json.loads(x) for x in (work / "predictions" / "api" / "arena.jsonl").read_text().splitlines()]
    assert rows[0]["judge"]["prompt"] == [{"role": "HUMAN", "prompt": expected[0]}]
    before = len(stub_server.log)
    assert _run(str(cfg), "-w", str(work)).exit_code == 0
    assert len(stub_server.log) == before


def test_lmevaluator_pairwise_random_order_is_the_references_seeded_shuffle(stub_server: StubServer,
                                                                           tmp_path) -> None:
    cfg = _pair(tmp_path, stub_server, "random")
    res = _run(str(cfg), "-w", str(tmp_path / "w"))
    assert res.exit_code == 0, res.output
    # the reference seeds Python's random with 666 per judged pair and shuffles [base, model] row by row
    random.seed(666)
    expected = []
    for r, base in zip(PAIR_ROWS, BASE_PREDS):
        pair = [base, PAIR_REPLIES[r["question"]]]
        random.shuffle(pair)
        expected.append(_pair_prompt(r["question"], *pair))
    assert sorted(b["messages"][-1]["content"] for b in _judge_requests(stub_server)) == sorted(expected)


def test_lmevaluator_pairwise_without_base_predictions_is_a_typed_error(stub_server: StubServer,
                                                                       tmp_path) -> None:
    cfg = _pair(tmp_path, stub_server, "double", given="nowhere")
    work = tmp_path / "w"
    res = _run(str(cfg), "-w", str(work))
    assert "Traceback" not in res.output
    result = json.loads((work / "results" / "api" / "arena.json").read_text())
    assert "PW610" in result["error"] and "gpt4-0314" in result["error"] and "given_pred" in result["error"]
    assert _judge_requests(stub_server) == []


def test_lmevaluator_settings_are_checked() -> None:
    tpl = {"template": "{prediction}"}

    def build(ev: dict, ds: dict | None = None):
        return build_evaluation({"evaluator": {"type": "LMEvaluator", **ev}}, where="datasets[0].eval_cfg",
                                dataset_cfg=ds, file="cfg.py")

    with pytest.raises(JudgeError, match="unknown LMEvaluator setting") as ei:
        build({"prompt_template": tpl, "judge_config": {}})
    assert ei.value.field == "datasets[0].eval_cfg.evaluator.judge_config"
    with pytest.raises(JudgeError, match="needs a prompt_template"):
        build({})
    with pytest.raises(JudgeError, match="True or False") as ei:
        build({"prompt_template": tpl, "pack_all_predictions": "yes"})
    assert ei.value.field.endswith("pack_all_predictions")
    with pytest.raises(JudgeError, match="unknown subjective mode") as ei:
        build({"prompt_template": tpl}, {"mode": "pairs"})
    assert ei.value.field == "datasets[0].mode"
    with pytest.raises(JudgeError, match="infer_order"):
        build({"prompt_template": tpl}, {"mode": "m2n", "infer_order": "twice", "base_models": [{"abbr": "b"}]})
    with pytest.raises(JudgeError, match="base_models"):
        build({"prompt_template": tpl}, {"mode": "m2n"})
    with pytest.raises(EvaluationError, match="unknown postprocessor"):
        build({"prompt_template": tpl, "pred_postprocessor": {"type": "no_such_postprocess"}})
    # the configs' judge_cfg-less form plans; scoring without a judge model is a typed error, not a traceback
    ev = build({"prompt_template": tpl, "meta_review_prompt_template": tpl, "output_path": "x.json"})
    with pytest.raises(JudgeError, match="judge model"):
        ev.score(["x"], ["y"], EvalContext(rows=[{}]))
    # allpair needs the other models' answers at once: the form plans, running it says why it cannot
    ev = build({"prompt_template": tpl}, {"mode": "allpair"})
    with pytest.raises(JudgeError, match="allpair"):
        ev.score(["x"], ["y"], EvalContext(rows=[{}]))


def test_conversation_predictions_and_multi_eval_columns() -> None:
    from promptweave.evaluate.judge_lm import LMEvaluator

    ev = LMEvaluator(prompt_template={"template": "{prediction}"})
    conv = [{"round": 1, "user": "hi", "assistant": "hello"}, {"round": 2, "user": "bye", "assistant": "ciao"}]
    cols = ev._pred_columns([conv], "gold")
    assert cols == {"prediction_r1": "hello", "prediction_r2": "ciao", "reference": ""}
    packed = LMEvaluator(prompt_template={"template": "{prediction}"}, pack_all_predictions=True)
    assert packed._pred_columns([conv], "gold")["prediction"] == str(conv)
    multi = LMEvaluator(prompt_template={"template": "{prediction}"}, multi_eval=True)
    [(_, entries, golds, owners)] = multi._single_jobs(
        ["ans"], [{"judge_prompt_list": ["J1 {prediction}", "J2 {prediction}"], "k": 1}], [{"q": "x"}])
    assert [e["prediction"] for e in entries] == ["J1 ans", "J2 ans"] and owners == [0, 0]
    assert golds == [{"k": 1, "judge_prompt": "J1 {prediction}"}, {"k": 1, "judge_prompt": "J2 {prediction}"}]
    with pytest.raises(JudgeError, match="neither text nor a conversation"):
        ev._pred_columns([None], "gold")


def test_inverse_ifeval_judge_template_fills_from_the_row() -> None:
    from promptweave.evaluate.judge import GenericLLMEvaluator
    from promptweave.prompt.dialogue import Turn

    g = GenericLLMEvaluator(prompt_template={"type": "InverseIFEvalJudgePromptTemplate"}, judge_cfg={"abbr": "j"})
    entry = {"prompt": "Q?", "response_reference": "R", "prediction": "P {x}", "judge_system_prompt": "SYS",
             "judge_prompt_template": "<q>{prompt}</q><r>{response}</r><g>{response_reference}</g>"}
    turns = [t for t in g.fill(entry) if isinstance(t, Turn)]
    assert turns == [Turn("SYSTEM", "SYS"), Turn("HUMAN", "<q>Q?</q><r>P {x}</r><g>R</g>")]
    # no per-row template: the reference's default one
    default = [t for t in g.fill({"prompt": "Q", "response_reference": "R", "prediction": "P"}) if isinstance(t, Turn)]
    assert default[1] == Turn("HUMAN", "<题目>：\nQ\n\n<标准答案>：\nR\n\n<学生答案>：\nP")
    with pytest.raises(Exception, match="takes no settings"):
        GenericLLMEvaluator(prompt_template={"type": "InverseIFEvalJudgePromptTemplate", "x": 1})


def test_numerical_llmjudge_postprocess_is_the_mean_absolute_error() -> None:
    from promptweave.evaluate.judge import GenericLLMEvaluator

    g = GenericLLMEvaluator(prompt_template={"template": "{prediction}"}, judge_cfg={"abbr": "j"},
                            dict_postprocessor={"type": "numerical_llmjudge_postprocess"})
    verdicts = [{"output": "the value is 2.5 eV"}, {"output": "no idea"}, {"output": "answer: 7"}]
    metrics, tag = g.grade(verdicts, [{}, {}, {}], [2.0, 1.0, 4])
    assert metrics == {"mae": pytest.approx((0.5 + 1.0 + 3.0) / 3)} and tag is None
    with pytest.raises(JudgeError, match="numeric gold"):
        g.grade(verdicts, [{}, {}, {}], ["a", "b", "c"])


def test_empty_evaluator_dict_plans_with_a_warning_and_fails_scoring_typed() -> None:
    with pytest.warns(UserWarning, match="empty dict"):
        ev = build_evaluation({"evaluator": {}}, where="datasets[0].eval_cfg")
    with pytest.raises(EvaluationError, match="empty dict") as ei:
        ev.score(["x"], ["y"])
    assert ei.value.field == "datasets[0].eval_cfg.evaluator"


@pytest.mark.parametrize("pred,ref,verdict", [
    ("我推荐《霸王别姬》", "霸王别姬", "[正确]"), ("我推荐《活着》", "霸王别姬", "[错误]"),
    ("我不确定，也许是霸王别姬", "霸王别姬", "[错误]"), ("推荐《活着》", "[not]霸王别姬", "[正确]"),
    ("推荐《霸王别姬》", "[not]霸王别姬", "[错误]"), ("推荐《活着》", ["霸王别姬", "活着"], "[正确]")])
def test_charm_memory_rule(pred: str, ref, verdict: str) -> None:
    from promptweave.suites.charm import CharmMemoryEvaluator

    s = CharmMemoryEvaluator().score([pred], [ref], EvalContext(rows=[{"input": "q"}]))
    assert s.details[0]["judge"]["output"] == verdict and s.correct == [verdict == "[正确]"] and s.metrics == {}


def test_judge_models_named_only_in_the_subjective_partitioner(stub_server: StubServer, tmp_path) -> None:
    cfg = _single(tmp_path, stub_server, 'dict_postprocessor=dict(type="generic_llmjudge_postprocess")')
    text = cfg.read_text().replace("judge_models = [_judge]", "eval = dict(partitioner=dict("
                                   "type='SubjectiveNaivePartitioner', judge_models=[_judge]))")
    cfg.write_text(text)
    res = _run(str(cfg), "-w", str(tmp_path / "w"))
    assert res.exit_code == 0, res.output
    assert len(_judge_requests(stub_server)) == 4


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False),
       st.text(alphabet="abc xyz:=", max_size=12))
def test_numerical_judge_reply_parses_the_first_number(value: float, prefix: str) -> None:
    from promptweave.evaluate.judge import _post_numerical

    text = f"{value:.6f}"
    metrics, values, _ = _post_numerical([f"{prefix} {text} eV"], [{}], [0])
    assert values == [str(float(text))] and metrics["mae"] == pytest.approx(float(text))


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=20), st.text(min_size=1, max_size=6))
def test_charm_memory_rule_negation_is_the_complement(pred: str, gold: str) -> None:
    from promptweave.suites.charm import RIGHT, WRONG, charm_memory_verdict

    plain, negated = charm_memory_verdict(pred, gold), charm_memory_verdict(pred, "[not]" + gold)
    assert {plain, negated} <= {RIGHT, WRONG}
    if any(u in pred for u in ("不确定", "无法确定", "无法回答", "不知道", "不认识")):
        assert plain == negated == WRONG
    else:
        assert plain != negated and (plain == RIGHT) == (gold in pred)


INVERSE = _HEAD + '''
inv = dict(
    abbr="inv", path="inv.jsonl",
    reader_cfg=dict(input_columns=["prompt", "judge_prompt_template", "judge_system_prompt"],
                    output_column="response_reference"),
    infer_cfg=dict(
        prompt_template=dict(type="RawPromptTemplate", messages=[dict(role="user", content="{{prompt}}")]),
        retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer", max_out_len=32)),
    eval_cfg=dict(evaluator=dict(type="GenericLLMEvaluator",
                                 prompt_template=dict(type="InverseIFEvalJudgePromptTemplate"),
                                 dict_postprocessor=dict(type="generic_llmjudge_postprocess")), pred_role="BOT"),
)
datasets = [inv]
'''


def test_inverse_ifeval_judge_gets_the_rows_own_system_and_user_messages(stub_server: StubServer, tmp_path) -> None:
    rows = [{"prompt": "2+2?", "response_reference": "4", "judge_system_prompt": "You are strict.",
             "judge_prompt_template": "JUDGE Q={prompt} ANSWER={response} GOLD={response_reference}"}]
    (tmp_path / "inv.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = tmp_path / "config.py"
    cfg.write_text(INVERSE.format(url=stub_server.url))
    stub_server.answer = lambda body: "A" if body["messages"][-1]["content"].startswith("JUDGE") else "It is 4."
    work = tmp_path / "w"
    res = _run(str(cfg), "-w", str(work))
    assert res.exit_code == 0, res.output
    [sent] = _judge_requests(stub_server)
    assert sent["messages"] == [{"role": "system", "content": "You are strict."},
                                {"role": "user", "content": "JUDGE Q=2+2? ANSWER=It is 4. GOLD=4"}]
    assert json.loads((work / "results" / "api" / "inv.json").read_text())["metrics"]["accuracy"] == 100.0
