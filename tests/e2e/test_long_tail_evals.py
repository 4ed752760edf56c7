"""Long-tail evaluators end to end: GAOKAO-Bench (native loader, four objective question types) and RULER (the
shipped prompt and eval_cfg; its loader synthesises data from a tokenizer, so rows come from a JSONL file here)."""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app
from tests.e2e.harness import EVAL, OPENCOMPASS, by_marker, missing_eval_names, result, run_config

GAOKAO = "GaokaoBench.GaokaoBench_no_subjective_gen_d21e37"


def _needs(*names: str, post: tuple[str, ...] = ()) -> None:
    missing = missing_eval_names(names, post)
    if missing:
        pytest.skip("not implemented in this build: " + ", ".join(missing))


def _paper(cache, folder: str, keyword: str, items: list[tuple[str, list[str]]]) -> None:
    f = cache / "data" / "GAOKAO-BENCH" / "data" / folder / f"{keyword}.json"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps({"keywords": keyword, "example": [
        {"index": i, "year": "2020", "category": "x", "score": 5, "question": q, "answer": a, "analysis": ""}
        for i, (q, a) in enumerate(items)]}, ensure_ascii=False), encoding="utf-8")


def test_gaokao_objective_question_types(tmp_path, cache):
    _needs("GaokaoBenchEvaluator_single_choice", "GaokaoBenchEvaluator_multi_choice",
           "GaokaoBenchEvaluator_multi_question_choice", "GaokaoBenchEvaluator_five_out_of_seven")
    mcq = "Multiple-choice_Questions"
    _paper(cache, mcq, "2010-2022_Math_II_MCQs", [("[q0] 1+1=? A.1 B.2 C.3 D.4", ["B"]),
                                                   ("[q1] 2+2=? A.1 B.2 C.3 D.4", ["D"])])
    _paper(cache, mcq, "2010-2022_Physics_MCQs", [("[q10] 哪些正确？", ["BC"]), ("[q11] 哪些正确？", ["ACD"])])
    _paper(cache, mcq, "2010-2022_Geography_MCQs", [("[q20] （1）…（2）…", ["A", "C"])])
    _paper(cache, mcq, "2012-2022_English_Cloze_Test", [("[q30] 七选五", ["A", "B", "C", "D", "E"])])
    replies = {
        0: "【解析】1+1=2，选 B <eoe>\n【答案】B <eoa>",  # right
        1: "【解析】A 错 <eoe>\n【答案】C <eoa>",  # wrong (last A-D is C)
        10: "【解析】……<eoe>\n【答案】B C <eoa>",  # exact: 2 points
        11: "【解析】……<eoe>\n【答案】A D <eoa>",  # subset of ACD: 1 point
        20: "（1）【答案】A <eoa>\n（2）【答案】B <eoa>",  # 1 of 2 blanks
        30: "【答案】 A B C D G <eoa>",  # 4 of 5
    }
    abbrs = ("GaokaoBench_2010-2022_Math_II_MCQs", "GaokaoBench_2010-2022_Physics_MCQs",
             "GaokaoBench_2010-2022_Geography_MCQs", "GaokaoBench_2012-2022_English_Cloze_Test")
    select = f"[d for d in GaokaoBench_datasets if d['abbr'] in {abbrs!r}]"
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, GAOKAO, "GaokaoBench_datasets", select)
    assert res.exit_code == 0, res.output
    scores = {a: result(work, a)["metrics"]["score"] for a in abbrs}
    assert scores == {abbrs[0]: pytest.approx(50.0), abbrs[1]: pytest.approx(100 * 3 / 4),
                      abbrs[2]: pytest.approx(50.0), abbrs[3]: pytest.approx(80.0)}


def test_ruler_cwe_and_qa_shipped_eval(tmp_path, cache):
    _needs("RulerCweEvaluator", "RulerQaEvaluator")
    cwe_rows = [{"prompt": "[q0] Which words are most common?", "answer": ["apple", "pear", "plum", "fig"]},
                {"prompt": "[q1] Which words are most common?", "answer": ["kiwi", "lime"]}]
    qa_rows = [{"prompt": "[q10] Where?", "answer": ["Paris", "Paris, France"]},
               {"prompt": "[q11] Where?", "answer": ["Rome"]}]
    for name, rows in (("cwe", cwe_rows), ("qa", qa_rows)):
        (cache / f"ruler_{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    replies = {0: "Answer: 1. Apple 2. pear 3. PLUM 4. grape", 1: "kiwi", 10: "It is in paris.", 11: "Milan"}
    keep = "abbr=d['abbr'], reader_cfg=d['reader_cfg'], infer_cfg=d['infer_cfg'], eval_cfg=d['eval_cfg']"
    select = (f"[dict({keep}, type='JsonlDataset', path={str(cache / 'ruler_cwe.jsonl')!r}) for d in cwe_datasets]"
              f" + [dict({keep}, type='JsonlDataset', path={str(cache / 'ruler_qa.jsonl')!r})"
              " for d in qa_datasets[:1]]")
    cfg = tmp_path / "eval_ruler.py"
    with StubServer(answer=by_marker(replies)) as server:
        text = EVAL.format(package=OPENCOMPASS, module="ruler.ruler_cwe_gen", name="cwe_datasets", select=select,
                           url=server.url)
        cfg.write_text(text.replace("import cwe_datasets\n", "import cwe_datasets\n    from "
                                    f"{OPENCOMPASS}.ruler.ruler_qa_gen import qa_datasets\n"), encoding="utf-8")
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "work"), "--no-progress"])
    assert res.exit_code == 0, res.output
    # cwe: (3/4 + 1/2) / 2 = 62.5; qa: one of two rows names an accepted answer
    assert result(tmp_path / "work", "ruler_cwe")["metrics"] == {"score": 62.5}
    assert result(tmp_path / "work", "ruler_qa_squad")["metrics"] == {"score": 50.0}
