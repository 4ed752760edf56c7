"""OpenCompass's ``AttackInferencer`` (PromptBench prompt selection) through ``promptweave run`` against the loopback
stand-in server: every prompt of ``original_prompt_list`` fills ``{adv_prompt}``, each is scored on the dataset, and
the ranking, per-prompt scores and the reference's ``attacklog.txt`` lines are checked against values computed
here. The stand-in model answers right or wrong by a table of (prompt, row)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_stub import StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import AttackStageError, ConfigError
from promptweave.infer.attack import AttackSettings, attack_stage, selection_log, with_prompt

PROMPTS = ["Classify the pair.", "Is it entailment?", "Decide: A or B.", "Label it."]
GOLD = ["A", "B", "A", "B", "A"]
# RIGHT[k][n]: whether the model answers row n right under prompt k
RIGHT = [[True, True, False, False, False],
         [True, True, True, True, False],
         [False, False, False, False, False],
         [True, True, True, True, False]]

CONFIG = '''
models = [dict(abbr="stub", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
               batch_size=2, max_out_len=16, backoff_base=0, max_retries=1,
               meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                         dict(role="BOT", api_role="BOT", generate=True)]))]
datasets = [dict(
    abbr="pairs", path="pairs.jsonl",
    reader_cfg=dict(input_columns=["s1", "s2"], output_column="label"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template=dict(round=[
            dict(role="HUMAN", prompt="{{adv_prompt}}\\nSentence 1: {{s1}}\\nSentence 2: {{s2}}\\nAnswer:")])),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="AttackInferencer", original_prompt_list={prompts}, adv_key="adv_prompt",
                        max_out_len=8)),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator"), pred_role="BOT",
                  pred_postprocessor=dict(type="first_option_postprocess", options="AB")),
)]
{extra}
'''


def model(body: dict) -> str:
    text = body["messages"][-1]["content"]
    k = next(i for i, p in enumerate(PROMPTS) if text.startswith(p + "\n"))
    n = int(re.search(r"\[q(\d+)\]", text).group(1))
    right = GOLD[n]
    return f"The answer is {right if RIGHT[k][n] else 'AB'.replace(right, '')}."


def _write(tmp_path: Path, url: str, extra: str = "") -> Path:
    with open(tmp_path / "pairs.jsonl", "w", encoding="utf-8") as f:
        for n, g in enumerate(GOLD):
            f.write(json.dumps({"s1": f"[q{n}] first", "s2": "second", "label": g}) + "\n")
    cfg = tmp_path / "eval_attack.py"
    cfg.write_text(CONFIG.format(url=url, prompts=repr(PROMPTS), extra=extra), encoding="utf-8")
    return cfg


def test_every_prompt_is_scored_ranked_and_logged(tmp_path) -> None:
    with StubServer(answer=model) as srv:
        cfg = _write(tmp_path, srv.url)
        work = tmp_path / "work"
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--no-progress"])
        assert res.exit_code == 0, res.output
        sent = [e["body"]["messages"][-1]["content"] for e in srv.log]
        first = (work / "results" / "stub" / "pairs.json").read_text()
        # resumable: a rerun is answered from the response cache
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--no-progress"])
        assert res.exit_code == 0, res.output
        assert srv.total_received == len(sent)
    assert sorted(sent) == sorted(f"{p}\nSentence 1: [q{n}] first\nSentence 2: second\nAnswer:"
                                  for p in PROMPTS for n in range(len(GOLD)))
    acc = [sum(r) / len(r) for r in RIGHT]
    order = sorted(range(len(PROMPTS)), key=lambda k: acc[k], reverse=True)  # ties keep the list order
    result = json.loads((work / "results" / "stub" / "pairs.json").read_text())
    assert json.loads(first)["prompt_selection"] == result["prompt_selection"]
    sel = result["prompt_selection"]
    assert [p["prompt_id"] for p in sel["prompts"]] == order == [1, 3, 0, 2]
    assert [p["score"] for p in sel["prompts"]] == pytest.approx([acc[k] for k in order])
    assert [p["metrics"]["accuracy"] for p in sel["prompts"]] == pytest.approx([100 * acc[k] for k in order])
    assert result["metrics"]["accuracy"] == pytest.approx(100 * max(acc))
    log = Path(sel["log"]).read_text(encoding="utf-8")
    assert log == "".join(f"Prompt: {PROMPTS[k]}, acc: {acc[k] * 100:.2f}%\n" for k in order)
    preds = [json.loads(x) for x in (work / "predictions" / "stub" / "pairs.jsonl").read_text().splitlines()]
    assert len(preds) == len(PROMPTS) * len(GOLD)
    assert [p["correct"] for p in preds] == [RIGHT[k][n] for k in range(len(PROMPTS)) for n in range(len(GOLD))]


def test_dry_run_shows_every_prompt_that_will_run(tmp_path) -> None:
    cfg = _write(tmp_path, "http://127.0.0.1:9/v1")
    res = CliRunner().invoke(app, ["run", str(cfg), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "attack" in res.output and str(len(PROMPTS) * len(GOLD)) in res.output


def test_an_adversarial_stage_without_promptbench_is_refused_at_plan_time(tmp_path, monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "promptbench" else real(name, *a))
    cfg = _write(tmp_path, "http://127.0.0.1:9/v1", 'attack = dict(attack="textfooler", query_budget=100, prompt_topk=1)')
    res = CliRunner().invoke(app, ["run", str(cfg), "--dry-run"])
    assert res.exit_code != 0
    assert "[PW170]" in res.output and "eval_attack.py" in res.output and "promptbench" in res.output
    with pytest.raises(AttackStageError, match=r"attack\.attack: .*'promptbench' package is not installed"):
        attack_stage({"attack": {"attack": "textfooler", "prompt_topk": 1}}, file="x.py")
    assert attack_stage({"attack": {"attack": "textfooler", "prompt_topk": 0}}) is not None  # selection only
    assert attack_stage({}) is None


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"x\.py: inf\.original_prompt_list"):
        AttackSettings.from_settings({"adv_key": "p"}, file="x.py", field="inf")
    with pytest.raises(ConfigError, match=r"inf\.adv_key"):
        AttackSettings.from_settings({"original_prompt_list": ["a"]}, field="inf")
    s = AttackSettings.from_settings({"original_prompt_list": ["a", "b", "a"], "adv_key": "p"})
    assert s.prompts == ("a", "b") and s.metric_key == "accuracy"


def test_the_prompt_fills_after_the_rows_columns() -> None:
    rows = [{"a": 1, "p": "old", "b": 2}, {"a": 3}]
    got = with_prompt(rows, "p", "NEW")
    assert list(got[0].items()) == [("a", 1), ("p", "NEW"), ("b", 2)]  # as {**row, **extra} keeps the key's place
    assert list(got[1].items()) == [("a", 3), ("p", "NEW")] and rows[1] == {"a": 3}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
                                  max_size=20), st.floats(0, 1)), max_size=6))
def test_log_lines_read_back(pairs) -> None:
    text = selection_log(pairs)
    *lines, tail = text.split("\n")  # the reference writes one line per prompt, each ended by a newline
    assert tail == "" and len(lines) == len(pairs)
    for line, (p, acc) in zip(lines, pairs, strict=True):
        assert line == f"Prompt: {p}, acc: {acc * 100:.2f}%"
