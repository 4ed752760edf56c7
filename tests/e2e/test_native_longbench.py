"""LongBench configs natively (``LongBench<subset>Dataset``: one JSONL per subset, the folder's loading script never
run): a QA subset (qasper, F1) and a classification subset (trec, ``all_labels``), end to end against the
stand-in server; cross-checked with OpenCompass's own evaluators where it is installed with its dependencies."""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.e2e import oc_full
from tests.e2e.harness import by_marker, predictions, result, run_config


def _write(cache, name, rows):
    f = cache / "data" / "Longbench" / "data" / f"{name}.jsonl"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f


def _run(tmp_path, module, name, replies):
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, module, name)
    assert res.exit_code == 0, res.output
    return work


def _outputs(work, abbr):
    return [p["output"] for p in sorted(predictions(work, abbr), key=lambda p: p["index"])]


def test_longbench_qasper_f1(tmp_path, cache):
    rows = [{"input": f"[q{i}] What is used?", "context": "A long paper.", "answers": answers, "length": 3,
             "dataset": "qasper", "language": "en", "all_classes": None, "_id": str(i)}
            for i, answers in enumerate([["BERT"], ["a large corpus", "unanswerable"]])]
    _write(cache, "qasper", rows)
    work = _run(tmp_path, "longbench.longbenchqasper.longbench_qasper_gen", "LongBench_qasper_datasets",
                {0: "BERT", 1: "nothing related"})
    got = result(work, "LongBench_qasper")["metrics"]["score"]
    assert got == pytest.approx(50.0)  # F1 1.0 on the first row, 0 on the second
    ref = oc_full.run_reference("""
        from opencompass.datasets import LongBenchF1Evaluator
        RESULT = LongBenchF1Evaluator().score(PAYLOAD["preds"], PAYLOAD["golds"])["score"]
    """, {"preds": _outputs(work, "LongBench_qasper"), "golds": [r["answers"] for r in rows]}, cwd=tmp_path)
    assert got == pytest.approx(ref)


def test_longbench_trec_classification(tmp_path, cache):
    classes = ["Abbreviation", "Entity", "Location"]
    rows = [{"input": f"[q{i}] Where is Paris?", "context": "Examples.", "answers": [gold], "length": 3,
             "dataset": "trec", "language": "en", "all_classes": classes, "_id": str(i)}
            for i, gold in enumerate(["Location", "Entity", "Abbreviation"])]
    _write(cache, "trec", rows)
    replies = {0: "\nLocation\nbecause", 1: "Abbreviation", 2: "Abbreviation"}
    work = _run(tmp_path, "longbench.longbenchtrec.longbench_trec_gen", "LongBench_trec_datasets", replies)
    got = result(work, "LongBench_trec")["metrics"]["score"]
    assert got == pytest.approx(100 * 2 / 3)
    ref = oc_full.run_reference("""
        from opencompass.datasets import LongBenchClassificationEvaluator, trec_postprocess
        preds = [trec_postprocess(p) for p in PAYLOAD["preds"]]
        RESULT = LongBenchClassificationEvaluator().score(preds, PAYLOAD["golds"])["score"]
    """, {"preds": _outputs(work, "LongBench_trec"),
          "golds": [{"answers": r["answers"], "all_classes": r["all_classes"]} for r in rows]}, cwd=tmp_path)
    assert got == pytest.approx(ref)
