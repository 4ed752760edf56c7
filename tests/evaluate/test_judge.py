"""LLM-as-judge end to end: `promptweave run` against the loopback stand-in server (tests/servers/openai_stub.py)
as both the evaluated model and the judge; a rerun sends no judge request again."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from openai_stub import StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import JudgeError
from promptweave.evaluate import EvalContext, build_evaluation
from promptweave.evaluate.judge import grade_letter, judge_metrics

ROWS = [{"question": "2+2?", "answer": "4"}, {"question": "3+3?", "answer": "6"},
        {"question": "capital of France?", "answer": "Paris"}, {"question": "5*5?", "answer": "25"}]
# the evaluated model's replies, by question
REPLIES = {"2+2?": "It is 4.", "3+3?": "It is 7.", "capital of France?": "paris, of course", "5*5?": "25"}

CONFIG = '''
_judge_tpl = dict(type="PromptTemplate", template=dict(
    begin=[dict(role="SYSTEM", fallback_role="HUMAN", prompt="You grade answers.")],
    round=[dict(role="HUMAN", prompt="GRADE\\nQ: {{question}}\\nPRED: {{prediction}}\\nGOLD: {{obj_gold}}\\nA or B?")]))
_judge = dict(abbr="judge", type="OpenAICompatModel", kind="api", base_url="{url}", model="judge-model",
              key="EMPTY", batch_size=4, backoff_base=0,
              meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                        dict(role="BOT", api_role="BOT", generate=True)]))
qa = dict(
    abbr="qa", path="qa.jsonl",
    reader_cfg=dict(input_columns=["question"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN", prompt="{{question}}")])),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="GenInferencer", max_out_len=32)),
    eval_cfg=dict(evaluator={evaluator}),
)
judge_models = [_judge]
datasets = [qa]
models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
               batch_size=4, backoff_base=0,
               meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                         dict(role="BOT", api_role="BOT", generate=True)]))]
'''

GENERIC = ('dict(type="GenericLLMEvaluator", prompt_template=_judge_tpl, judge_cfg={judge_cfg}, '
           'dict_postprocessor=dict(type="generic_llmjudge_postprocess"))')
CASCADE = ('dict(type="CascadeEvaluator", parallel={parallel}, rule_evaluator=dict(type="AccEvaluator"), '
           'llm_evaluator=' + GENERIC + ')')


def _answer(body: dict) -> str:
    text = body["messages"][-1]["content"]
    if "GRADE" in text:
        pred = re.search(r"PRED: (.*)\nGOLD", text, re.DOTALL).group(1)
        gold = re.search(r"GOLD: (.*)\n", text).group(1)
        return "A" if gold.lower() in pred.lower() else "B"
    return REPLIES[text]


def _judge_requests(server: StubServer) -> int:
    return sum(1 for e in server.log if e["body"].get("model") == "judge-model")


def _setup(tmp_path: Path, server: StubServer, evaluator: str) -> Path:
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cfg = tmp_path / "config.py"
    cfg.write_text(CONFIG.format(url=server.url, evaluator=evaluator))
    server.answer = _answer
    return cfg


def _run(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-progress"])


def test_generic_judge_end_to_end_and_cached_rerun(stub_server: StubServer, tmp_path) -> None:
    cfg = _setup(tmp_path, stub_server, GENERIC.format(judge_cfg="_judge"))
    work = tmp_path / "w"
    res = _run(str(cfg), "-w", str(work))
    assert res.exit_code == 0, res.output
    assert _judge_requests(stub_server) == 4
    result = json.loads((work / "results" / "api" / "qa.json").read_text())
    m = result["metrics"]
    assert m["accuracy"] == 75.0 and m["correct_count"] == 3 and m["incorrect_count"] == 1
    assert m["attempted_ratio"] == 100.0 and m["accuracy_given_attempted"] == 75.0
    rows = [json.loads(x) for x in (work / "predictions" / "api" / "qa.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in rows] == [True, False, True, True]
    j = rows[1]["judge"]
    assert j["output"] == "B" and j["grade"] == "B" and j["model"] == "judge"
    # the judge prompt went through the judge's meta template: SYSTEM falls back to HUMAN and merges with the
    # grader turn into one user message
    assert j["prompt"] == [{"role": "HUMAN", "prompt": "You grade answers.\nGRADE\nQ: 3+3?\nPRED: It is 7.\n"
                                                        "GOLD: 6\nA or B?"}]
    sent = len(stub_server.log)
    res = _run(str(cfg), "-w", str(work))
    assert res.exit_code == 0, res.output
    assert len(stub_server.log) == sent  # nothing re-sent, the judge included
    assert json.loads((work / "results" / "api" / "qa.json").read_text())["metrics"] == m


def test_empty_judge_cfg_uses_judge_models_or_flag(stub_server: StubServer, tmp_path) -> None:
    cfg = _setup(tmp_path, stub_server, GENERIC.format(judge_cfg="dict()"))
    res = _run(str(cfg), "-w", str(tmp_path / "w"), "--judge-model", "judge")
    assert res.exit_code == 0, res.output
    assert _judge_requests(stub_server) == 4
    res = _run(str(cfg), "-w", str(tmp_path / "w2"), "--judge-model", "nobody", "--dry-run")
    assert res.exit_code != 0 and "--judge-model" in res.output and "nobody" in res.output


@pytest.mark.parametrize("parallel,judged", [(False, 2), (True, 4)])
def test_cascade_judges_rule_failures(stub_server: StubServer, tmp_path, parallel: bool, judged: int) -> None:
    # the rule (exact text) accepts only '25'; 'It is 4.' and 'paris, of course' need the judge; 'It is 7.' fails
    cfg = _setup(tmp_path, stub_server, CASCADE.format(parallel=parallel, judge_cfg="_judge"))
    work = tmp_path / "w"
    res = _run(str(cfg), "-w", str(work))
    assert res.exit_code == 0, res.output
    result = json.loads((work / "results" / "api" / "qa.json").read_text())
    assert result["metrics"] == {"accuracy": 75.0}
    stats = result["evaluation"]["cascade_stats"]
    assert stats["rule_correct"] == 1 and stats["llm_evaluated"] == (judged if parallel else 3)
    assert _judge_requests(stub_server) == (4 if parallel else 3)


def test_judge_without_model_is_refused_at_plan_time() -> None:
    ev = build_evaluation({"evaluator": {"type": "GenericLLMEvaluator", "judge_cfg": {},
                                         "prompt_template": {"template": "{prediction}"}}}, where="datasets[0].eval_cfg")
    with pytest.raises(JudgeError, match="judge model") as ei:
        ev.check(judge=False)
    assert ei.value.field == "datasets[0].eval_cfg.evaluator.judge_cfg"
    with pytest.raises(JudgeError, match="--judge-model"):
        ev.score(["x"], ["y"], EvalContext(rows=[{}]))


def test_grades_and_metrics() -> None:
    assert grade_letter("Grade: B") == "B" and grade_letter("no idea") == "unknown"
    m = judge_metrics(["A", "B", "unknown", "A"])
    assert m["accuracy"] == 50.0 and m["accuracy_given_attempted"] == pytest.approx(200 / 3)
    assert m["not_attempted_count"] == 1 and m["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_view_shows_the_judge_prompt(stub_server: StubServer, tmp_path) -> None:
    cfg = _setup(tmp_path, stub_server, GENERIC.format(judge_cfg="_judge"))
    work = tmp_path / "w"
    assert _run(str(cfg), "-w", str(work)).exit_code == 0
    res = CliRunner().invoke(app, ["view", str(cfg), "--judge", str(work), "-i", "1", "--json"])
    assert res.exit_code == 0, res.output
    recs = json.loads(res.output)
    assert len(recs) == 1 and recs[0]["index"] == 1 and recs[0]["judge"]["grade"] == "B"
    res = CliRunner().invoke(app, ["view", str(cfg), "--judge", str(work), "-i", "1"])
    assert "PRED: It is 7." in res.output and "grade B" in res.output
    res = CliRunner().invoke(app, ["view", str(cfg), "--judge", str(tmp_path / "nowhere")])
    assert res.exit_code != 0 and "PW610" in res.output


def test_academic_dict_postprocessor_and_argument_checks(monkeypatch) -> None:
    from promptweave.evaluate.judge import GenericLLMEvaluator

    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")  # bridge: an installed opencompass would serve the last name

    tpl = {"template": "{prediction}"}
    g = GenericLLMEvaluator(prompt_template=tpl, judge_cfg={"abbr": "j"},
                            dict_postprocessor={"type": "generic_llmjudge_academic_postprocess",
                                                "metric_name": "score"})
    assert g.academic and g.metric_name == "score"
    verdicts = [{"output": "A"}, {"output": "B"}]
    assert g.grade(verdicts, [{}, {}]) == ({"score": 50.0, "score_given_attempted": 50.0, "attempted_ratio": 100.0,
                                             "correct_count": 1.0, "incorrect_count": 1.0,
                                             "not_attempted_count": 0.0}, "A")
    with pytest.raises(JudgeError, match="unknown dict_postprocessor argument"):
        GenericLLMEvaluator(prompt_template=tpl, dict_postprocessor={"type": "generic_llmjudge_postprocess",
                                                                     "metric_name": "x"})
    with pytest.raises(JudgeError, match="unknown dict_postprocessor"):
        GenericLLMEvaluator(prompt_template=tpl, dict_postprocessor={"type": "alignbench_postprocess"})


def test_other_judge_dict_postprocessors() -> None:
    from promptweave.evaluate.judge import GenericLLMEvaluator

    def graded(name: str, outputs: list[str], rows: list[dict]) -> tuple[dict, list]:
        g = GenericLLMEvaluator(prompt_template={"template": "{prediction}"}, dict_postprocessor={"type": name})
        verdicts = [{"output": o} for o in outputs]
        metrics, _ = g.grade(verdicts, rows)
        return metrics, [v["grade"] for v in verdicts]

    m, grades = graded("simpleqa_postprocess", ["A", "B", "no idea", "C"], [{}] * 4)
    assert grades == ["A", "B", "C", "C"]
    assert m == {"accuracy": 25.0, "accuracy_given_attempted": 50.0, "f1": pytest.approx(2 * 0.5 * 0.25 / 0.75)}
    m, _ = graded("livereasonbench_postprocess", ["A", "B"], [{}] * 2)
    assert set(m) == {"accuracy_given_attempted", "f1"}
    rows = [{"discipline": "Sci", "field": "Phy", "subfield": "Opt"}, {"discipline": "Sci", "field": "Chem",
                                                                      "subfield": "Org"}, {}]
    m, _ = graded("supergpqa_llmjudge_postprocess", ["A", "B", "A"], rows)
    assert m["accuracy"] == 66.67 and m["SuperGPQA-Sci"] == 50.0 and m["SuperGPQA-Sci-Phy-Opt"] == 100.0
    assert m["SuperGPQA-unknown"] == 100.0 and m["total_count"] == 3
    m, grades = graded("chem_exam_score_llmjudge_postprocess", ["<NUMBER>0.5</NUMBER>", "\\boxed{1}", "x"], [{}] * 3)
    assert m == {"final_score": 50.0} and grades == ["0.5", "1.0", "0.0"]
