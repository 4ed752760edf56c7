"""AISBench's L-Eval configs with promptweave alone (the references hidden): stand-in records at the file each
config names (``ais_bench/datasets/LEval/LEval/<part>/<task>.jsonl`` under ``$AIS_BENCH_DATASETS_CACHE``), AISBench's
own rules where they differ from OpenCompass's (``CodeUEvaluator``, ``SciFiEvaluator``, ``LEvalEMEvaluator``
reported as ``accuracy``), scores equal to AISBench's.

The expected scores were computed once with AISBench 3.1's own loader classes, ``general_postprocess`` and
evaluators in its full environment on the same records and replies, and recorded (``tests/reference_record.py``);
with ``$PROMPTWEAVE_AIS_FULL_VENV`` set each test recomputes them there and checks the record.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from openai_stub import StubServer

from tests.e2e.harness import AISBENCH, by_marker, predictions, result, run_config
from tests.reference_record import reference_result


@pytest.fixture(autouse=True)
def _alone(monkeypatch):
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")


@pytest.fixture
def ais_cache(tmp_path, monkeypatch):
    root = tmp_path / "ais"
    root.mkdir()
    monkeypatch.setenv("AIS_BENCH_DATASETS_CACHE", str(root))
    monkeypatch.chdir(tmp_path)
    return root


def write(root, part, name, docs):
    f = root / "ais_bench" / "datasets" / "LEval" / "LEval" / part / f"{name}.jsonl"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("".join(json.dumps({"input": doc, "instructions": [q for q, _ in qa], "outputs": [a for _, a in qa]})
                         + "\n" for doc, qa in docs), encoding="utf-8")
    return f


def run(tmp_path, module, name, replies):
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, f"leval.{module}", name, package=AISBENCH)
    assert res.exit_code == 0, res.output
    return work


def reference(tmp_path, cls, evaluator, file, work, abbr):
    """AISBench's own loader, ``general_postprocess`` and evaluator on the replies promptweave got."""
    preds = [p["output"] for p in sorted(predictions(work, abbr), key=lambda p: p["index"])]
    code = f"""
import json, sys
from ais_bench.benchmark.datasets.leval import {cls}
from ais_bench.benchmark.openicl.icl_evaluator import {evaluator}
from ais_bench.benchmark.utils.postprocess.text_postprocessors import general_postprocess
p = json.loads(sys.stdin.read())
ds = {cls}.load(path=p["file"], name="stand-in")["test"]
out = {evaluator}().score([general_postprocess(x) for x in p["preds"]], [r["answer"] for r in ds])
print("@@" + json.dumps(out))
"""
    payload = {"file": str(file), "preds": preds}

    def live() -> dict:
        py = Path(os.environ["PROMPTWEAVE_AIS_FULL_VENV"]) / "bin" / "python"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run([str(py), "-c", code], input=json.dumps(payload),
                              capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("@@")][-1][2:])

    return reference_result(live if os.environ.get("PROMPTWEAVE_AIS_FULL_VENV") else None, code=code,
                            payload=payload, tmp=tmp_path, venv_env="PROMPTWEAVE_AIS_FULL_VENV")


def test_aisbench_leval_code_u(tmp_path, ais_cache):
    f = write(ais_cache, "Exam", "codeU", [
        ("def f(): ...", [("[q0] What is printed?", "[1, 2, 3]"), ("[q1] And now?", "42")]),
        ("def g(): ...", [("[q2] What is printed?", "hello world")]),
    ])
    work = run(tmp_path, "codeu.leval_code_u_gen", "LEval_code_u_datasets",
               {0: "1 2 3", 1: "It prints 42", 2: "hello world"})
    got = result(work, "LEval_code_u")["metrics"]
    assert got == {"accuracy": pytest.approx(100 * 2 / 3)}  # AISBench 3.1: 66.66666666666667
    ref = reference(tmp_path, "LEvalCodeUDataset", "CodeUEvaluator", f, work, "LEval_code_u")
    assert got["accuracy"] == pytest.approx(ref["accuracy"])


def test_aisbench_leval_sci_fi_loyalty(tmp_path, ais_cache):
    f = write(ais_cache, "Exam", "sci_fi", [
        ("A story.", [("[q0] Is it so?", "True [fact: False]"), ("[q1] And this?", "False"),
                      ("[q2] Then?", "True")]),
    ])
    work = run(tmp_path, "scifi.leval_sci_fi_gen", "LEval_sci_fi_datasets",
               {0: "True. [fact: false]", 1: "it is FALSE here", 2: "Yes"})
    got = result(work, "LEval_sci_fi")["metrics"]
    assert got == {"accuracy": pytest.approx(100 * 2 / 3)}  # AISBench 3.1: 66.66666666666667
    ref = reference(tmp_path, "LEvalSciFiDataset", "SciFiEvaluator", f, work, "LEval_sci_fi")
    assert got["accuracy"] == pytest.approx(ref["accuracy"])


def test_aisbench_leval_topic_retrieval_reports_accuracy(tmp_path, ais_cache):
    f = write(ais_cache, "Exam", "topic_retrieval_longchat", [
        ("A chat.", [("[q0] First topic?", "The Roman Empire"), ("[q1] Second topic?", "cats")]),
    ])
    work = run(tmp_path, "topicretrievallongchat.leval_topic_retrieval_gen", "LEval_tr_datasets",
               {0: "The Roman Empire, and more", 1: "dogs"})
    got = result(work, "LEval_topic_retrieval")["metrics"]
    assert got == {"accuracy": pytest.approx(50.0)}  # AISBench 3.1: 50.0 (OpenCompass calls it "score")
    ref = reference(tmp_path, "LEvalTopicRetrievalDataset", "LEvalEMEvaluator", f, work, "LEval_topic_retrieval")
    assert got["accuracy"] == pytest.approx(ref["accuracy"])
