"""Gen / PPL / CLP inference on the tiny local model and the stand-in OpenAI server."""
from __future__ import annotations

import math

import pytest
import torch
from openai_stub import StubServer, fake_token_logprob

from promptweave.errors import ConfigError, ModelError
from promptweave.infer import Record, ResponseCache, infer_clp, infer_gen, infer_ppl
from promptweave.models.base import GenerationParams
from promptweave.models.hf import HFModel
from promptweave.models.openai_compat import OpenAICompatModel

SHOTS = "".join(f"Question: What is {i} plus {i}? Answer: {2 * i}\n" for i in range(5))


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    return HFModel(str(tiny_model_dir), device="cpu", dtype="float32", batch_size=4)


def direct_avg_nll(lm: HFModel, ids: list[int], mask_length: int | None = None) -> float:
    with torch.no_grad():
        logits = lm.model(torch.tensor([ids])).logits[0].float()
    loss = torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]), reduction="none")
    if mask_length is None:
        return float(loss.sum() / len(ids))
    return float(loss[mask_length - 1:].sum() / (len(ids) - mask_length))


def ppl_records(n_rows: int = 3, labels=("A", "B", "C", "D")) -> list[Record]:
    return [Record(index=i, label=lab, mode="ppl", shot_ids=[0, 1, 2, 3, 4],
                   rendered=f"{SHOTS}Question: row {i}? Answer: {lab}")
            for i in range(n_rows) for lab in labels]


def test_ppl_matches_direct_computation(lm: HFModel) -> None:
    res = infer_ppl(lm, ppl_records())
    assert [r.index for r in res] == [0, 1, 2]
    for r in res:
        for lab, score in r.ppl.items():
            assert score == pytest.approx(direct_avg_nll(lm, lm.encode(r.prompts[lab])), abs=1e-4)
        assert r.prediction == min(r.ppl, key=r.ppl.get)
        assert r.shot_ids == [0, 1, 2, 3, 4]


def test_shared_prefix_and_naive_agree(lm: HFModel) -> None:
    shared = infer_ppl(lm, ppl_records(), shared_prefix=True)
    naive = infer_ppl(lm, ppl_records(), shared_prefix=False)
    for s, n in zip(shared, naive, strict=True):
        assert s.prediction == n.prediction
        for lab in s.ppl:
            assert s.ppl[lab] == pytest.approx(n.ppl[lab], abs=1e-5)


def test_ppl_rows_must_share_examples(lm: HFModel) -> None:
    recs = ppl_records(1)
    recs[1].shot_ids = [0]
    with pytest.raises(ConfigError, match="same in-context examples"):
        infer_ppl(lm, recs)


def test_ppl_normalizing_str(lm: HFModel) -> None:
    recs = ppl_records(1, labels=("A", "B"))
    for r in recs:
        r.ppl_context, r.ppl_answer = f"{SHOTS}Question: row 0? Answer:", f" {r.label}"
        r.rendered = r.ppl_context + r.ppl_answer
    [res] = infer_ppl(lm, recs, normalizing_str="Answer:")
    for r in recs:
        m = len(lm.encode(r.ppl_context))
        want = direct_avg_nll(lm, lm.encode(r.rendered), m) - direct_avg_nll(
            lm, lm.encode("Answer:" + r.ppl_answer), len(lm.encode("Answer:")))
        assert res.ppl[r.label] == pytest.approx(want, abs=1e-4)


def test_clp_matches_direct_softmax(lm: HFModel) -> None:
    recs = [Record(index=0, rendered="Question: pick one. Answer:"), Record(index=1, rendered="Answer:")]
    res = infer_clp(lm, recs, ["A", "B", "C"])
    ids = [lm.tokenizer("A" if c == 0 else "BC"[c - 1], add_special_tokens=False)["input_ids"][-1]
           for c in range(3)]
    for r, rec in zip(res, recs, strict=True):
        with torch.no_grad():
            p = torch.softmax(lm.model(torch.tensor([lm.encode(rec.rendered)])).logits[0, -1], -1)
        assert r.probs == pytest.approx([float(p[i]) for i in ids], rel=1e-4)
        assert r.prediction == "ABC"[max(range(3), key=lambda i: r.probs[i])]


def test_gen_local_is_cached(lm: HFModel, tmp_path) -> None:
    recs = [Record(index=i, rendered=f"Question: {i}? Answer:") for i in range(5)]
    params = GenerationParams(max_out_len=4)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        first = infer_gen(lm, recs, params, cache)
        calls = lm.stats.forward_calls
        again = infer_gen(lm, recs, params, cache)
        assert lm.stats.forward_calls == calls  # nothing recomputed
        assert [g.output for g in again] == [g.output for g in first]
        infer_gen(lm, recs, GenerationParams(max_out_len=5), cache)
        assert lm.stats.forward_calls > calls  # other decoding parameters are other requests


def test_gen_api_chat_and_model_isolation(stub_server: StubServer, tmp_path) -> None:
    stub_server.answer = lambda body: f"{body['model']} says {body['messages'][-1]['content']}"
    recs = [Record(index=i, rendered=[{"role": "user", "content": f"q{i}"}]) for i in range(4)]
    params = GenerationParams(max_out_len=16)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        a = OpenAICompatModel(stub_server.url, "model-a", backoff_base=0)
        b = OpenAICompatModel(stub_server.url, "model-b", backoff_base=0)
        out_a = infer_gen(a, recs, params, cache)
        assert stub_server.total_received == 4
        infer_gen(a, recs, params, cache)
        assert stub_server.total_received == 4  # all cached
        out_b = infer_gen(b, recs, params, cache)
        assert stub_server.total_received == 8  # a different model never reads model-a's answers
    assert out_a[2].output == "model-a says q2" and out_b[2].output == "model-b says q2"


def test_ppl_over_api_uses_echo_logprobs(stub_server: StubServer) -> None:
    m = OpenAICompatModel(stub_server.url, "m", backoff_base=0)
    recs = [Record(index=0, label=lab, rendered=f"Q: x Answer: {lab}") for lab in ("yes", "no")]
    [res] = infer_ppl(m, recs)
    for lab in ("yes", "no"):
        toks = ["Q:", " x", " Answer:", f" {lab}"]
        want = -sum(fake_token_logprob(t) for t in toks[1:]) / len(toks)
        assert res.ppl[lab] == pytest.approx(want)


def test_clp_over_api_is_a_clear_error(stub_server: StubServer) -> None:
    m = OpenAICompatModel(stub_server.url, "m")
    with pytest.raises(ModelError, match="local model"):
        infer_clp(m, [Record(index=0, rendered="x")], ["A"])


def test_segments_with_token_ids_reach_the_local_model(lm: HFModel) -> None:
    start = lm.tokenizer.convert_tokens_to_ids("<|im_start|>")
    recs = [Record(index=0, label=lab, rendered=[[start], f"user\nAnswer: {lab}"]) for lab in ("A", "B")]
    [res] = infer_ppl(lm, recs)
    ids = [start] + lm.tokenizer("user\nAnswer: A", add_special_tokens=False)["input_ids"]
    assert res.ppl["A"] == pytest.approx(direct_avg_nll(lm, ids), abs=1e-4)
    assert not math.isnan(res.ppl["B"])
