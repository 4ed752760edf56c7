"""L-Eval configs as OpenCompass ships them, with promptweave alone (the references hidden): stand-in data in the
``L4NLP/LEval`` repository layout (``LEval/Exam|Generation/<task>.jsonl``), replies from the stand-in server, scores
equal to OpenCompass's.

The expected scores were computed once with OpenCompass 0.5.4's own classes (its loader, with ``load_dataset``
reading the stand-in file, its postprocessors and evaluators) in the full environment (``$PROMPTWEAVE_OC_FULL_VENV``, built by ``tools/build_reference_venvs.sh``) on the
same records and replies; with ``$PROMPTWEAVE_OC_FULL_VENV`` set each test recomputes them there.
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


def write_task(cache, part, name, docs):
    """``docs``: (document, [(question, answer), ...]) -> one record per document, as the repository keeps them."""
    f = cache / "L4NLP" / "LEval" / "LEval" / part / f"{name}.jsonl"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("".join(json.dumps({"input": doc, "instructions": [q for q, _ in qa], "outputs": [a for _, a in qa],
                                     "source": name}) + "\n" for doc, qa in docs), encoding="utf-8")
    return f


def run(tmp_path, module, name, replies):
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, module, name)
        sent = [e["body"]["messages"] for e in server.log]
    assert res.exit_code == 0, res.output
    return work, sent


def outputs(work, abbr):
    return [p["output"] for p in sorted(predictions(work, abbr), key=lambda p: p["index"])]


# the reference class's own code, its ``load_dataset`` (the hub repository's loading script) replaced by a read of
# the stand-in file as the test split
REFERENCE = """
import sys
import datasets
from opencompass.datasets import leval
cls = getattr(leval, PAYLOAD["cls"])
sys.modules[cls.__module__].load_dataset = lambda **kw: datasets.DatasetDict(
    {{"test": datasets.Dataset.from_json(PAYLOAD["file"])}})
ds = cls.load(path="L4NLP/LEval", name="stand-in")["test"]
golds = [r["answer"] for r in ds]
{post}
RESULT = {{"rows": [dict(r) for r in ds], "metrics": {score}}}
"""


def reference(tmp_path, cls, file, preds, *, post="", score):
    return oc_full.run_reference(REFERENCE.format(post=post, score=score),
                                 {"cls": cls, "file": str(file), "preds": preds}, cwd=tmp_path)


def test_leval_coursera_multi_letter_accuracy(tmp_path, cache):
    f = write_task(cache, "Exam", "coursera", [
        ("Course notes about graphs.", [("[q0] Which are trees?", "A"), ("[q1] Which hold cycles?", "BC")]),
        ("Course notes about sorting.", [("[q2] Which is stable?", "D")]),
    ])
    work, sent = run(tmp_path, "leval.levalcoursera.leval_coursera_gen_36a006", "LEval_coursera_datasets",
                     {0: "The answer is A.", 1: "B and C", 2: "D"})
    got = result(work, "LEval_coursera")["metrics"]
    assert got == {"accuracy": pytest.approx(100 * 2 / 3)}  # OpenCompass 0.5.4: 66.66666666666667
    assert "Document is as follows.\nCourse notes about graphs.\nQuestion:[q1] Which hold cycles?\nAnswer:" in \
        json.dumps(sent, ensure_ascii=False).replace("\\n", "\n")
    ref = reference(tmp_path, "LEvalCourseraDataset", f, outputs(work, "LEval_coursera"), post="""
from opencompass.utils.text_postprocessors import first_capital_postprocess_multi
from opencompass.openicl.icl_evaluator import AccEvaluator
preds = [first_capital_postprocess_multi(p) for p in PAYLOAD["preds"]]""",
                    score="AccEvaluator().score(preds, golds)")
    assert got["accuracy"] == pytest.approx(ref["metrics"]["accuracy"])
    assert [p["gold"] for p in predictions(work, "LEval_coursera")] == [r["answer"] for r in ref["rows"]]


def test_leval_gsm100_answer_digits(tmp_path, cache):
    f = write_task(cache, "Exam", "gsm100", [
        ("Q: 1+1? A: The answer is 2.", [("[q0] How many apples?", "1,234"), ("[q1] How many pears?", "56")]),
        ("Q: 2+2? A: The answer is 4.", [("[q2] How many plums?", "7")]),
    ])
    work, _ = run(tmp_path, "leval.levalgsm100.leval_gsm100_gen_77dd94", "LEval_gsm100_datasets",
                  {0: "So 1,000 + 234. The answer is 1,234 apples.", 1: "The answer is $56.", 2: "I think 7"})
    got = result(work, "LEval_gsm100")["metrics"]
    assert got == {"accuracy": pytest.approx(100 * 2 / 3)}  # OpenCompass 0.5.4: 66.66666666666667
    ref = reference(tmp_path, "LEvalGSM100Dataset", f, outputs(work, "LEval_gsm100"), post="""
from opencompass.datasets import gsm100_postprocess, gsm100_dataset_postprocess
from opencompass.openicl.icl_evaluator import AccEvaluator
preds = [gsm100_postprocess(p) for p in PAYLOAD["preds"]]
golds = [gsm100_dataset_postprocess(g) for g in golds]""", score="AccEvaluator().score(preds, golds)")
    assert got["accuracy"] == pytest.approx(ref["metrics"]["accuracy"])


def test_leval_topic_retrieval_em(tmp_path, cache):
    f = write_task(cache, "Exam", "topic_retrieval_longchat", [
        ("A chat about many topics.", [("[q0] First topic?", "The Roman Empire"), ("[q1] Second topic?", "cats"),
                                       ("[q2] Third topic?", "apple pie")]),
    ])
    work, _ = run(tmp_path, "leval.levaltopicretrieval.leval_topic_retrieval_gen_bf433f", "LEval_tr_datasets",
                  {0: "The Roman Empire, and more", 1: "dogs", 2: "I like apple pie. Yes"})
    got = result(work, "LEval_topic_retrieval")["metrics"]
    assert got == {"score": pytest.approx(100 * 2 / 3)}  # OpenCompass 0.5.4: 66.66666666666667
    ref = reference(tmp_path, "LEvalTopicRetrievalDataset", f, outputs(work, "LEval_topic_retrieval"), post="""
from opencompass.utils.text_postprocessors import general_postprocess
preds = [general_postprocess(p) for p in PAYLOAD["preds"]]""", score="leval.LEvalEMEvaluator().score(preds, golds)")
    assert got["score"] == pytest.approx(ref["metrics"]["score"])


def test_leval_natural_question_rows_carry_the_gold_length(tmp_path, cache):
    f = write_task(cache, "Generation", "natural_question", [
        ("A page about France.", [("[q0] capital of France", "Paris is the capital"),
                                  ("[q1] river of Paris", "the Seine")]),
    ])
    work, sent = run(tmp_path, "leval.levalnaturalquestion.leval_naturalquestion_gen_52c33f", "LEval_nq_datasets",
                     {0: "Paris is the capital city", 1: "it is the Loire"})
    text = json.dumps(sent, ensure_ascii=False).replace("\\n", "\n")
    assert "Instruction: [q0] capital of France?\nAnswer this question with 4 words." in text
    assert "Instruction: [q1] river of Paris?\nAnswer this question with 2 words." in text
    got = result(work, "LEval_nq")["metrics"]
    assert set(got) == {"rouge1", "rouge2", "rougeL", "rougeLsum"}
    ref = reference(tmp_path, "LEvalNaturalQuestionDataset", f, outputs(work, "LEval_nq"),
                    score="{'rows': len(golds)}")
    assert [r["length"] for r in ref["rows"]] == [4, 2]
