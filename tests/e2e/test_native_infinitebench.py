"""InfiniteBench configs as OpenCompass ships them, with promptweave alone (the references hidden): stand-in
records in ``./data/InfiniteBench/<task>.jsonl``, replies from the stand-in server, scores equal to OpenCompass's.

The expected scores were computed once with OpenCompass 0.5.4's own loader classes, postprocessors and evaluators
in the full environment (``$PROMPTWEAVE_OC_FULL_VENV``, built by ``tools/build_reference_venvs.sh``) on the same records and replies; with
``$PROMPTWEAVE_OC_FULL_VENV`` set each test recomputes them there.
"""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.e2e import oc_full
from tests.e2e.harness import by_marker, predictions, result, run_config


@pytest.fixture(autouse=True)
def _alone(monkeypatch):
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")


def write(cache, name, records):
    f = cache / "data" / "InfiniteBench" / f"{name}.jsonl"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("".join(json.dumps({"id": i, **r}) + "\n" for i, r in enumerate(records)), encoding="utf-8")
    return f


def run(tmp_path, task, digest, replies):
    module = f"infinitebench.infinitebench{task}.infinitebench_{task}_gen_{digest}"
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, module, f"InfiniteBench_{task}_datasets")
        sent = [e["body"]["messages"] for e in server.log]
    assert res.exit_code == 0, res.output
    return work, json.dumps(sent, ensure_ascii=False).replace("\\n", "\n")


def outputs(work, abbr):
    return [p["output"] for p in sorted(predictions(work, abbr), key=lambda p: p["index"])]


def reference(tmp_path, cls, file, preds, post, score):
    code = f"""
import opencompass.datasets as D
ds = D.{cls}.load(path=PAYLOAD["file"])
golds = [r["answer"] for r in ds]
preds = PAYLOAD["preds"]
{post}
RESULT = {{"rows": [dict(r) for r in ds], "metrics": {score}}}
"""
    return oc_full.run_reference(code, {"file": str(file), "preds": preds}, cwd=tmp_path)


def test_infinitebench_endia(tmp_path, cache):
    f = write(cache, "longdialogue_qa_eng", [
        {"context": "[q0] script", "input": "Who is $$MASK$$?", "answer": ["ALICE"], "options": []},
        {"context": "[q1] script", "input": "Who is $$MASK$$?", "answer": ["BOB", "ROBERT"], "options": []},
        {"context": "[q2] script", "input": "Who is $$MASK$$?", "answer": ["CAROL"], "options": []},
    ])
    work, _ = run(tmp_path, "endia", "c96eb5", {0: "It is Alice.", 1: "Robert", 2: "carol: yes"})
    got = result(work, "InfiniteBench_endia")["metrics"]
    assert got == {"score": pytest.approx(100 * 2 / 3)}  # OpenCompass 0.5.4: 66.66666666666667
    ref = reference(tmp_path, "InfiniteBenchendiaDataset", f, outputs(work, "InfiniteBench_endia"), "",
                    "D.InfiniteBenchendiaEvaluator().score(preds, golds)")
    assert got["score"] == pytest.approx(ref["metrics"]["score"])


def test_infinitebench_mathcalc_counts_leading_numbers(tmp_path, cache):
    f = write(cache, "math_calc", [
        {"context": "[q0] 1 + 2 + 2 + 3", "input": "", "answer": [3, 5, 8], "options": []},
        {"context": "[q1] 4 - 1", "input": "", "answer": [4, 3], "options": []},
    ])
    work, _ = run(tmp_path, "mathcalc", "78d17e", {0: "3, 5, 9, 12", 1: "4 3 7"})
    got = result(work, "InfiniteBench_mathcalc")["metrics"]
    assert got == {"score": pytest.approx(200.0)}  # (2 + 2) / 2 rows × 100; OpenCompass 0.5.4: 200.0
    ref = reference(tmp_path, "InfiniteBenchmathcalcDataset", f, outputs(work, "InfiniteBench_mathcalc"), "",
                    "D.InfiniteBenchmathcalcEvaluator().score(preds, golds)")
    assert got["score"] == pytest.approx(ref["metrics"]["score"])


def test_infinitebench_retrievekv(tmp_path, cache):
    f = write(cache, "kv_retrieval", [
        {"context": '{"k1": "a1b2-c3"}', "input": "[q0] Key: k1", "answer": "a1b2-c3", "options": []},
        {"context": '{"k2": "d4e5"}', "input": "[q1] Key: k2", "answer": "d4e5", "options": []},
        {"context": '{"k3": "f6"}', "input": "[q2] Key: k3", "answer": "f6", "options": []},
    ])
    work, text = run(tmp_path, "retrievekv", "06b3ac", {0: 'The value is "a1b2-c3".', 1: "d4e5x", 2: "{f6}"})
    assert "Extract the value corresponding to the specified key in the JSON object below.\n\n" in text
    got = result(work, "InfiniteBench_retrievekv")["metrics"]
    assert got == {"score": pytest.approx(100 * 2 / 3)}  # "d4e5x" is not the word d4e5; OpenCompass 0.5.4: 66.67
    ref = reference(tmp_path, "InfiniteBenchretrievekvDataset", f, outputs(work, "InfiniteBench_retrievekv"),
                    "", "D.InfiniteBenchretrievekvEvaluator().score(preds, golds)")
    assert got["score"] == pytest.approx(ref["metrics"]["score"])


def test_infinitebench_coderun_and_mathfind_columns(tmp_path, cache):
    f1 = write(cache, "code_run", [
        {"context": "def func_1(x): ...", "input": "[q0] Compute func_1(-4) now", "answer": "-8", "options": []},
        {"context": "def func_22(x): ...", "input": "[q1] Compute func_22(3)", "answer": "9", "options": []},
    ])
    f2 = write(cache, "math_find", [
        {"context": "[q0] 3 9 1", "input": "The largest number of the list is?", "answer": 9, "options": []},
        {"context": "[q1] 3 9 1", "input": "The Minimum Value of the list is?", "answer": 1, "options": []},
    ])
    work, text = run(tmp_path, "coderun", "1a76bd", {0: "It returns -8", 1: "C. 9"})
    assert "There is a function called named func_1.\n\n" in text and "return value of func_22(3)." in text
    coderun = result(work, "InfiniteBench_coderun")["metrics"]
    work2, text2 = run(tmp_path, "mathfind", "6d799e", {0: "9", 1: "Maybe 2 or 1."})
    assert "What is the minimum value in the following list?\n\n[q1] 3 9 1" in text2
    mathfind = result(work2, "InfiniteBench_mathfind")["metrics"]
    # OpenCompass 0.5.4: code_run 0.0 (its config reads an option letter from replies to numeric golds);
    # math_find 50.0 (the int gold 9 and the reply "9" agree as text; "Maybe 2 or 1." gives 2)
    assert coderun == {"accuracy": pytest.approx(0.0)}
    assert mathfind == {"accuracy": pytest.approx(50.0)}
    ref = reference(tmp_path, "InfiniteBenchcoderunDataset", f1, outputs(work, "InfiniteBench_coderun"), """
from opencompass.utils.text_postprocessors import first_option_postprocess
from opencompass.openicl.icl_evaluator import AccEvaluator
preds = [first_option_postprocess(p, options="ABCD") for p in preds]""", "AccEvaluator().score(preds, golds)")
    assert [(r["func"], r["func_call"]) for r in ref["rows"]] == [("func_1", "func_1(-4)"),
                                                                   ("func_22", "func_22(3)")]
    assert coderun["accuracy"] == pytest.approx(ref["metrics"]["accuracy"])
    ref2 = reference(tmp_path, "InfiniteBenchmathfindDataset", f2, outputs(work2, "InfiniteBench_mathfind"), """
from opencompass.openicl.icl_evaluator import AccEvaluator
preds = [D.InfiniteBench_first_number_postprocess(p) for p in preds]""", "AccEvaluator().score(preds, golds)")
    assert [r["prefix"] for r in ref2["rows"]][1] == "What is the minimum value in the following list?"
    assert mathfind["accuracy"] == pytest.approx(ref2["metrics"]["accuracy"])
