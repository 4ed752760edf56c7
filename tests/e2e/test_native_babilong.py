"""BABILong configs as OpenCompass ships them, read natively: stand-in records in ``./data/babilong/data/<task>/
<length>.json``, prompts built from OpenCompass's own texts (read from its installed source as data), replies from the
stand-in server, scores equal to OpenCompass's.

The expected prompt and score were computed once with OpenCompass 0.5.4's own ``BabiLongDataset``,
``PromptTemplate`` and ``BabiLongEvaluator`` in the full environment (``$PROMPTWEAVE_OC_FULL_VENV``, built by ``tools/build_reference_venvs.sh``) on the same records
and replies; with ``$PROMPTWEAVE_OC_FULL_VENV`` set the test recomputes them there.
"""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.e2e import oc_full
from tests.e2e.harness import by_marker, predictions, result, run_config

RECORDS = [
    {"input": "Noise. [q0] Mary moved to the bathroom. More noise.  ", "question": "Where is Mary?",
     "target": "bathroom"},
    {"input": "[q1] John went to the hallway.", "question": "Where is John?", "target": "hallway"},
    {"input": "[q2] Daniel went back to the garden.", "question": "Where is Daniel?", "target": "garden"},
]


def write(cache):
    f = cache / "data" / "babilong" / "data" / "qa1" / "0k.json"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(RECORDS), encoding="utf-8")
    return f


def run(tmp_path, module):
    replies = {0: "Mary is in the bathroom.", 1: "The hallway.", 2: "Kitchen. The garden."}
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, f"babilong.{module}", "babiLong_0k_datasets",
                               select="babiLong_0k_datasets[:1]")
        sent = [e["body"]["messages"] for e in server.log]
    return res, work, sent


@pytest.mark.parametrize("module", ["babilong_0k_gen", "babilong_0k_rawprompt_gen"])
def test_babilong_qa1(tmp_path, cache, module):
    f = write(cache)
    res, work, sent = run(tmp_path, module)
    assert res.exit_code == 0, res.output
    got = result(work, "babilong_qa1_0k")["metrics"]
    assert got == {"score": pytest.approx(66.67)}  # OpenCompass 0.5.4: 66.67 (the third reply's first sentence)
    user = [m for m in sent[0] if m["role"] == "user"][-1]["content"]
    assert user.startswith("['I will give you context with the facts about positions of different persons")
    assert "<context>\\nNoise. [q0] Mary moved to the bathroom. More noise.\\n</context>\\n\\nQuestion: Where is " \
           "Mary?']" in user
    preds = [p["output"] for p in sorted(predictions(work, "babilong_qa1_0k"), key=lambda p: p["index"])]
    ref = oc_full.run_reference("""
        from opencompass.datasets.babilong.babilong import BabiLongDataset, BabiLongEvaluator
        from opencompass.openicl.icl_prompt_template import PromptTemplate
        ds = BabiLongDataset.load(path=PAYLOAD["dir"], task="qa1", split_name="0k")
        t = PromptTemplate(template=dict(round=[dict(role="HUMAN", prompt="{prompt}"),
                                                dict(role="BOT", prompt="{answer}\\n")]))
        t.ice_token = None
        first = t.generate_item(ds[0], output_field="answer", output_field_replace_token="")
        RESULT = {"prompt": [p["prompt"] for p in first if isinstance(p, dict) and p.get("role") == "HUMAN"][0],
                  "score": BabiLongEvaluator().score(PAYLOAD["preds"], [r["answer"] for r in ds])["score"]}
    """, {"dir": str(f.parent.parent), "preds": preds}, cwd=tmp_path)
    assert user == ref["prompt"]
    assert got["score"] == pytest.approx(ref["score"])


def test_babilong_without_the_reference_texts_is_a_typed_error(tmp_path, cache, monkeypatch):
    write(cache)
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    res, _, sent = run(tmp_path, "babilong_0k_gen")
    assert res.exit_code != 0 and not sent
    assert "[PW250]" in res.output and "pip install --no-deps opencompass==0.5.4" in res.output
