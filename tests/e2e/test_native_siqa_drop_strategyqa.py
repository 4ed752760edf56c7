"""OpenCompass's default SIQA (``SiqaDatasetV3``), DROP (``DropOpenAIEvaluator``) and StrategyQA (a bool gold
mapped to yes/no by its ``dataset_postprocessor``) configs, natively, end to end against the stand-in server.

Each test knows every reply and computes the expected score on its own; where OpenCompass is installed with its
dependencies (``tests/e2e/oc_full.py``) the same predictions and data are also scored by OpenCompass's own classes
and the two scores must be equal."""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.e2e import oc_full
from tests.e2e.harness import by_marker, predictions, result, run_config


def _run(tmp_path, module, name, replies):
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, module, name)
    assert res.exit_code == 0, res.output
    assert "reference bridge" not in res.output  # native, not bridged
    return work


def _replies(work, abbr):
    return [p["output"] for p in sorted(predictions(work, abbr), key=lambda p: p["index"])]


def test_strategyqa_bool_gold_is_mapped_to_yes_no(tmp_path, cache):
    gold = [True, False, True, False]
    said = ["Birds fly.\nSo the answer is yes", "So the answer is no\n\nmore", "The answer is no",
            "Hmm.\nSo the answer is no, it is not"]
    rows = [{"qid": str(i), "question": f"[q{i}] Is it so?", "answer": g, "facts": []} for i, g in enumerate(gold)]
    f = cache / "data" / "strategyqa" / "strategyQA_train.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps(rows), encoding="utf-8")
    work = _run(tmp_path, "strategyqa.strategyqa_gen", "strategyqa_datasets", dict(enumerate(said)))
    got = result(work, "strategyqa")["metrics"]["accuracy"]
    assert got == pytest.approx(75.0)  # yes/no/no/no against yes/no/yes/no

    ref = oc_full.run_reference("""
        from opencompass.datasets.strategyqa import (strategyqa_dataset_postprocess,
                                                     strategyqa_pred_postprocess)
        from opencompass.openicl.icl_evaluator import AccEvaluator
        rows = json.load(open(PAYLOAD["file"]))
        golds = [strategyqa_dataset_postprocess(r["answer"]) for r in rows]
        preds = [strategyqa_pred_postprocess(p) for p in PAYLOAD["preds"]]
        RESULT = AccEvaluator().score(preds, golds)["accuracy"]
    """, {"file": str(f), "preds": _replies(work, "strategyqa")}, cwd=tmp_path)
    assert got == pytest.approx(ref)


def test_siqa_gen_v3(tmp_path, cache):
    d = cache / "data" / "siqa"
    labels = [1, 2, 3]
    said = ["A.", "I think C.", "The answer is C"]  # a bare "A" is no option to the reference's rule
    for stem in ("train", "dev"):
        layouts.plain_jsonl(cache, f"data/siqa/{stem}.jsonl",
                            [{"context": f"[q{i}] Ann left.", "question": "Why?", "answerA": "tired",
                              "answerB": "bored", "answerC": "late"} for i in range(len(labels))])
        (d / f"{stem}-labels.lst").write_text("".join(f"{lab}\n" for lab in labels), encoding="utf-8")
    work = _run(tmp_path, "siqa.siqa_gen", "siqa_datasets", dict(enumerate(said)))
    got = result(work, "siqa")["metrics"]["accuracy"]
    assert got == pytest.approx(100 * 2 / 3)
    first = str(predictions(work, "siqa")[0])
    assert "A. tired\\nB. bored\\nC. late" in first or "A. tired\nB. bored\nC. late" in first

    ref = oc_full.run_reference("""
        from opencompass.datasets import SiqaDatasetV3
        from opencompass.openicl.icl_evaluator import AccEvaluator
        from opencompass.utils.text_postprocessors import first_option_postprocess
        ds = SiqaDatasetV3.load(PAYLOAD["path"])["validation"]
        preds = [first_option_postprocess(p, options="ABC", cushion=False) for p in PAYLOAD["preds"]]
        RESULT = AccEvaluator().score(preds, list(ds["answer"]))["accuracy"]
    """, {"path": str(d), "preds": _replies(work, "siqa")}, cwd=tmp_path)
    assert got == pytest.approx(ref)


def test_drop_openai_simple_evals(tmp_path, cache):
    rows = [("[q0] How many yards?", "12"), ("[q1] Who won?", "eagles|Philadelphia Eagles"),
            ("[q2] How many points?", "8"), ("[q3] Which team?", "the Giants")]
    said = ["Counting.\nAnswer: 12 yards", "answer:   The Eagles!", "Answer: 7", "Giants"]
    f = cache / "data" / "drop_simple_eval" / "dev.jsonl"
    layouts.plain_jsonl(cache, "data/drop_simple_eval/dev.jsonl",
                        [{"context": q, "ref_text": a} for q, a in rows])
    work = _run(tmp_path, "drop.drop_gen", "drop_datasets", dict(enumerate(said)))
    got = result(work, "drop")["metrics"]["accuracy"]
    assert got == pytest.approx(75.0)

    ref = oc_full.run_reference("""
        from opencompass.datasets import DropOpenAIEvaluator
        golds = [json.loads(line)["ref_text"] for line in open(PAYLOAD["file"])]
        RESULT = DropOpenAIEvaluator().score(PAYLOAD["preds"], golds)["accuracy"]
    """, {"file": str(f), "preds": _replies(work, "drop")}, cwd=tmp_path)
    assert got == pytest.approx(ref)
