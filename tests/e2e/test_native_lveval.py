"""LV-Eval configs as OpenCompass ships them, with promptweave alone (the references hidden): stand-in records in
the ``Infinigence/LVEval`` layout (``<task>/<task>_<length>.jsonl``), replies from the stand-in server, scores equal
to OpenCompass's.

The expected scores were computed once with OpenCompass 0.5.4's own classes (its loaders, with ``load_dataset``
reading the stand-in file, and its evaluators: jieba, ``rouge``) in the full environment (``$PROMPTWEAVE_OC_FULL_VENV``, built by ``tools/build_reference_venvs.sh``)
on the same records and replies; with ``$PROMPTWEAVE_OC_FULL_VENV`` set each test recomputes them there.
"""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.e2e import oc_full
from tests.e2e.harness import by_marker, predictions, result, run_config

pytest.importorskip("jieba")
pytest.importorskip("rouge")


@pytest.fixture(autouse=True)
def _alone(monkeypatch):
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")


def write(cache, task, records, length="16k"):
    f = cache / "Infinigence" / "LVEval" / task / f"{task}_{length}.jsonl"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return f


def run(tmp_path, task, digest, replies):
    """The config's first dataset (its 16k level)."""
    name = f"LVEval_{task}_datasets"
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, f"lveval.lveval{task}.lveval_{task}_gen_{digest}", name,
                               select=f"{name}[:1]")
        sent = [e["body"]["messages"] for e in server.log]
    assert res.exit_code == 0, res.output
    return work, json.dumps(sent, ensure_ascii=False).replace("\\n", "\n")


def outputs(work, abbr):
    return [p["output"] for p in sorted(predictions(work, abbr), key=lambda p: p["index"])]


# the reference class's own code, its ``load_dataset`` (the hub repository's loading script) replaced by a read of
# the stand-in file as the test split
REFERENCE = """
import sys
import datasets
import opencompass.datasets.lveval as L
cls = getattr(L, PAYLOAD["cls"])
sys.modules[cls.__module__].load_dataset = lambda **kw: datasets.DatasetDict(
    {"test": datasets.Dataset.from_json(PAYLOAD["file"])})
ds = cls.load(path="Infinigence/LVEval", name="stand-in")["test"]
ev = getattr(L, PAYLOAD["ev"])(language=PAYLOAD["lang"])
RESULT = {"rows": [dict(r) for r in ds], "metrics": ev.score(PAYLOAD["preds"], [r["answers"] for r in ds])}
"""


def reference(tmp_path, cls, ev, lang, file, preds):
    return oc_full.run_reference(REFERENCE, {"cls": cls, "ev": ev, "lang": lang, "file": str(file),
                                             "preds": preds}, cwd=tmp_path)


def test_lveval_loogle_sd_keyword_gated_f1(tmp_path, cache):
    f = write(cache, "loogle_SD_mixup", [
        {"input": "[q0] Who founded the city?", "context": "Passages.", "answers": ["King Arthur of Britain"],
         "answer_keywords": "King Arthur", "length": 100, "dataset": "loogle_SD_mixup", "language": "en"},
        {"input": "[q1] What year?", "context": "Passages.", "answers": ["in the year 1066"],
         "answer_keywords": "1066", "length": 100, "dataset": "loogle_SD_mixup", "language": "en"},
        {"input": "[q2] Which river?", "context": "Passages.", "answers": ["the river Thames"],
         "answer_keywords": "Thames river", "length": 100, "dataset": "loogle_SD_mixup", "language": "en"},
    ])
    work, text = run(tmp_path, "loogle_SD_mixup", "d7ea36",
                     {0: "It was Arthur, a king of Britain", 1: "the year was 1067", 2: "The Thames."})
    assert "Question: [q1] What year?\nAnswer:" in text
    got = result(work, "LVEval_loogle_SD_mixup_16k")["metrics"]
    # row 0: keywords found, F1 of {arthur, king, of, britain} vs {king, arthur, of, britain} plus extras;
    # row 1: keyword 1066 absent -> 0; row 2: one of two keywords (50%) -> F1 of {thames} vs {river, thames}
    assert got == {"LVEval_f1": pytest.approx(100 * (2 * 4 / 6 * 4 / 4 / (4 / 6 + 1) + 0 + 2 / 3) / 3)}
    ref = reference(tmp_path, "LVEvallooglesdDataset", "LVEvalOPTF1Evaluator", "en", f,
                    outputs(work, "LVEval_loogle_SD_mixup_16k"))
    assert ref["rows"][0]["answers"] == ["King Arthur of Britain", "King Arthur"]
    assert got["LVEval_f1"] == pytest.approx(ref["metrics"]["LVEval_f1"])


def test_lveval_cmrc_zh_f1_gated_by_the_answer(tmp_path, cache):
    f = write(cache, "cmrc_mixup", [
        {"input": "[q0] 谁发明了电话？", "context": "文章。", "answers": ["亚历山大·贝尔"], "confusing_facts": ["爱迪生"],
         "length": 10, "dataset": "cmrc_mixup", "language": "zh"},
        {"input": "[q1] 首都是哪里？", "context": "文章。", "answers": ["北京市"], "confusing_facts": [],
         "length": 10, "dataset": "cmrc_mixup", "language": "zh"},
        {"input": "[q2] 哪一年？", "context": "文章。", "answers": ["一九四九年"], "confusing_facts": [],
         "length": 10, "dataset": "cmrc_mixup", "language": "zh"},
    ])
    work, text = run(tmp_path, "cmrc_mixup", "465823", {0: "是亚历山大·贝尔发明的", 1: "上海", 2: "一九四九年十月"})
    assert "问题：[q1] 首都是哪里？\n回答：" in text
    got = result(work, "LVEval_cmrc_mixup_16k")["metrics"]
    ref = reference(tmp_path, "LVEvalcmrcDataset", "LVEvalOPTF1Evaluator", "zh", f,
                    outputs(work, "LVEval_cmrc_mixup_16k"))
    assert ref["rows"][0]["confusing_facts"] == ["爱迪生"]
    assert got["LVEval_f1"] == pytest.approx(ref["metrics"]["LVEval_f1"])
    # OpenCompass 0.5.4 on these records and replies: 44.444444444444436 (row 1, no keyword overlap, scores 0)
    assert got == {"LVEval_f1": pytest.approx(44.444444444444436)}


def test_lveval_dureader_zh_rouge_with_blacklist(tmp_path, cache):
    f = write(cache, "dureader_mixup", [
        {"input": "[q0] 如何种植番茄？", "context": "文章。", "answers": ["番茄需要充足的阳光和水分", "其他"],
         "length": 10, "dataset": "dureader_mixup", "language": "zh"},
        {"input": "[q1] 什么是光合作用？", "context": "文章。", "answers": ["植物利用光能制造有机物"],
         "length": 10, "dataset": "dureader_mixup", "language": "zh"},
    ])
    work, _ = run(tmp_path, "dureader_mixup", "465823", {0: "番茄需要阳光和水分", 1: ""})
    got = result(work, "LVEval_dureader_mixup_16k")["metrics"]
    ref = reference(tmp_path, "LVEvaldureaderDataset", "LVEvalOPTRougeEvaluator", "zh", f,
                    outputs(work, "LVEval_dureader_mixup_16k"))
    assert got["LVEval_rouge"] == pytest.approx(ref["metrics"]["LVEval_rouge"])
    # OpenCompass 0.5.4 on these records and replies: 44.44444419753087 (an empty reply scores 0)
    assert got == {"LVEval_rouge": pytest.approx(44.44444419753087)}


def test_lveval_factrecall_en_plain_f1(tmp_path, cache):
    f = write(cache, "factrecall_en", [
        {"input": "[q0] Who discovered relativity?", "context": "Passages.", "answers": ["Ludwig Beethoven"],
         "confusing_facts": ["Albert Einstein discovered relativity."], "length": 10, "dataset": "factrecall_en",
         "language": "en"},
        {"input": "[q1] Who discovered relativity?", "context": "Passages.", "answers": ["Ludwig Beethoven"],
         "confusing_facts": [], "length": 10, "dataset": "factrecall_en", "language": "en"},
    ])
    work, _ = run(tmp_path, "factrecall_en", "9a836f", {0: "Beethoven", 1: "Albert Einstein"})
    got = result(work, "LVEval_factrecall_en_16k")["metrics"]
    assert got == {"f1": pytest.approx(100 * (2 / 3) / 2)}  # F1 of {beethoven} vs {ludwig, beethoven}, then 0
    ref = reference(tmp_path, "LVEvalfactrecallenDataset", "LVEvalF1Evaluator", "en", f,
                    outputs(work, "LVEval_factrecall_en_16k"))
    assert got["f1"] == pytest.approx(ref["metrics"]["f1"])

