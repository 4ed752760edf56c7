"""Shipped AISBench multimodal configs end to end: stand-in data in the reference's layout (real PNG images in
base64 inside the TSV), the loopback server, and the OpenAI-style content parts each request carries."""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.data.mm_files import png, png_b64, tsv
from tests.e2e.harness import AISBENCH, result, run_config

# the shipped evaluators (ANLS, MMStar's choice matcher) are ais_bench's own; accuracy on exact text stands in
ACC = "[dict(d, eval_cfg=dict(evaluator=dict(type='AccEvaluator'))) for d in {name}]"


def _parts(body):
    (msg,) = [m for m in body["messages"] if m["role"] == "user"]
    return msg["content"]


def test_docvqa_requests_carry_the_image_file_then_the_question(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AIS_BENCH_DATASETS_CACHE", raising=False)
    f = tmp_path / "ais_bench/datasets/DocVQA/DocVQA_VAL.tsv"
    tsv(f, ["index", "image", "question", "answer"],
        [["1", png_b64(), "[q0] Title?", "Report"], ["2", "1", "[q1] Year?", "1999"]])
    said = {"[q0]": "Report", "[q1]": "2001"}

    def answer(body):
        text = json.dumps(body["messages"])
        return next(v for k, v in said.items() if k in text)

    with StubServer(answer=answer) as server:
        res, work = run_config(tmp_path, server.url, "docvqa.docvqa_gen", "docvqa_datasets",
                               select=ACC.format(name="docvqa_datasets"), package=AISBENCH)
        bodies = [e["body"] for e in server.log]
    assert res.exit_code == 0, res.output
    images = tmp_path / "ais_bench/datasets/DocVQA/DocVQA_images"
    parts = sorted((_parts(b) for b in bodies), key=lambda p: p[1]["text"])
    assert parts[0] == [{"type": "image_url", "image_url": {"url": f"file://{images / '1.jpg'}"}},
                        {"type": "text", "text": "[q0] Title?\nAnswer the question using a single word or phrase."}]
    assert parts[1][0]["image_url"]["url"] == f"file://{images / '2.jpg'}"
    assert (images / "2.jpg").read_bytes() == png()
    gold = {"[q0]": "Report", "[q1]": "1999"}
    expected = 100 * sum(said[k] == gold[k] for k in gold) / len(gold)
    assert result(work, "DocVQA")["metrics"]["accuracy"] == pytest.approx(expected)


def test_mmstar_base64_free_path_config_renders_hint_and_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AIS_BENCH_DATASETS_CACHE", raising=False)
    f = tmp_path / "ais_bench/datasets/mmstar/MMStar.tsv"
    tsv(f, ["index", "question", "answer", "category", "A", "B", "hint", "image"],
        [["0", "[q0] Colour?", "B", "perception", "green", "red", "", png_b64()]])
    with StubServer(answer=lambda b: "B") as server:
        res, work = run_config(tmp_path, server.url, "mmstar.mmstar_gen", "mmstar_datasets",
                               select=ACC.format(name="mmstar_datasets"), package=AISBENCH)
        bodies = [e["body"] for e in server.log]
    assert res.exit_code == 0, res.output
    parts = _parts(bodies[0])
    assert parts[0]["image_url"]["url"].endswith("/mmstar/MMStar_images/0.jpg")
    # the template's text part wraps the loader's question text
    assert parts[1]["text"] == ("Question: [q0] Colour?Options:\nA. green\nB. red\n"
                                "Please select the correct answer from the options above. \n\n")
