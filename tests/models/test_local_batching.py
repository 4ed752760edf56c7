"""Length-aware batching on a tiny random-init Llama: every local form gives the same outputs sorted by
length as in file order (greedy texts byte for byte, scores to 1e-6), in row order, with less padding;
PPL rows scored as packed rows equal the KV-cache path and each prompt scored alone."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from promptweave.forms.turn_loop import CachedGenerate  # noqa: E402
from promptweave.infer import Record  # noqa: E402
from promptweave.infer.clp import infer_clp  # noqa: E402
from promptweave.infer.gen import infer_gen  # noqa: E402
from promptweave.infer.ll import infer_ll  # noqa: E402
from promptweave.infer.ppl import infer_ppl  # noqa: E402
from promptweave.models.base import GenerationParams  # noqa: E402
from promptweave.models.hf import HFModel  # noqa: E402

WORDS = "the quick brown fox jumps over the lazy dog Paris is the capital of France".split()
# lengths chosen so file-order batches of 3 mix long and short prompts
SIZES = [3, 40, 5, 38, 2, 30, 7, 36, 4, 25, 9]


def direct_token_logprobs(lm: HFModel, ids: list[int]) -> list[float]:
    import torch

    with torch.no_grad():
        lp = torch.log_softmax(lm.model(torch.tensor([ids])).logits[0, :-1].float(), -1)
    return [float(lp[i, ids[i + 1]]) for i in range(len(ids) - 1)]


def text(n: int, k: int) -> str:
    return " ".join(WORDS[(k + j) % len(WORDS)] for j in range(n))


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    from tiny_lm import build_tiny_lm

    return build_tiny_lm(tmp_path_factory.mktemp("llama"), arch="llama", hidden=64, layers=2, seed=3)


@pytest.fixture()
def pair(llama_dir):
    """The same model twice: batched by length, and in file order."""
    return (HFModel(str(llama_dir), device="cpu", dtype="float32", batch_size=3),
            HFModel(str(llama_dir), device="cpu", dtype="float32", batch_size=3, length_sorted=False))


def test_generation_is_the_same_sorted_as_in_file_order(pair) -> None:
    recs = [Record(index=i, rendered=text(n, i)) for i, n in enumerate(SIZES)]
    params = GenerationParams(max_out_len=6)
    got = [[r.output for r in infer_gen(m, recs, params)] for m in pair]
    assert got[0] == got[1] and len(set(got[0])) > 3  # byte for byte, and not one answer for all rows
    assert pair[0].stats.forward_tokens < pair[1].stats.forward_tokens  # less padding in the prefill


def test_multiturn_turns_are_batched_by_length_too(pair) -> None:
    prompts = [text(n, i) for i, n in enumerate(SIZES)]
    got = [CachedGenerate(m, GenerationParams(max_out_len=4), None)(prompts) for m in pair]
    assert got[0] == got[1]
    assert pair[0].stats.forward_tokens < pair[1].stats.forward_tokens


def test_ppl_is_the_same_sorted_as_in_file_order(pair) -> None:
    recs = [Record(index=i, label=lab, rendered=f"{text(n, i)} Answer: {lab}", shot_ids=[])
            for i, n in enumerate(SIZES) for lab in ("A", "B", "Paris", "four")]
    got = [infer_ppl(m, recs) for m in pair]
    assert [r.index for r in got[0]] == list(range(len(SIZES)))
    for a, b in zip(*got):
        assert a.prediction == b.prediction and a.ppl == pytest.approx(b.ppl, abs=1e-6)
    assert len({r.prediction for r in got[0]}) > 1


def test_clp_and_ll_are_the_same_sorted_as_in_file_order(pair) -> None:
    recs = [Record(index=i, rendered=text(n, i)) for i, n in enumerate(SIZES)]
    clp = [infer_clp(m, recs, ["A", "B"]) for m in pair]
    for a, b in zip(*clp):
        assert a.index == b.index and a.probs == pytest.approx(b.probs, abs=1e-6)
    ll_recs = [Record(index=i, label=lab, rendered=f"{text(n, i)} Answer: {lab} fox", shot_ids=[])
               for i, n in enumerate(SIZES) for lab in ("A", "B")]
    conts = {i: " fox" for i in range(len(SIZES))}
    ll = [infer_ll(m, ll_recs, conts) for m in pair]
    for a, b in zip(*ll):
        assert a.prediction == b.prediction and a.loglikelihood == pytest.approx(b.loglikelihood, abs=1e-6)


def test_token_budget_splits_batches_and_keeps_outputs(llama_dir) -> None:
    budget = HFModel(str(llama_dir), device="cpu", dtype="float32", batch_size=8, max_batch_tokens=60)
    plain = HFModel(str(llama_dir), device="cpu", dtype="float32", batch_size=8)
    prompts = [text(n, i) for i, n in enumerate(SIZES)]
    params = GenerationParams(max_out_len=4)
    assert budget.generate(prompts, params) == plain.generate(prompts, params)
    assert budget.stats.forward_calls > plain.stats.forward_calls
    assert "60 padded tokens" in budget.batching_note()


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_packed_rows_equal_the_kv_cache_path_and_full_prompts(arch, llama_dir, tiny_model_dir) -> None:
    path = llama_dir if arch == "llama" else tiny_model_dir
    packed = HFModel(str(path), device="cpu", dtype="float32", batch_size=8)
    cached = HFModel(str(path), device="cpu", dtype="float32", batch_size=8)
    cached._packed_ok = False  # the KV-cache path, kept for architectures that refuse a 4-D mask
    groups = [[f"{text(n, i)} Answer: {lab}" for lab in ("A", "B", "Paris is", "four")] for i, n in enumerate(SIZES)]
    groups += [["Paris", "Berlin fox"], ["The quick brown fox"]]  # no shared token; one prompt alone
    a = packed.token_logprobs_groups(groups)
    b = cached.token_logprobs_groups(groups)
    assert packed._packed_ok is True
    for g, ga, gb in zip(groups, a, b):
        for prompt, x, y in zip(g, ga, gb):
            assert x == pytest.approx(y, abs=1e-5)
            assert x == pytest.approx(direct_token_logprobs(packed, packed.encode(prompt)), abs=1e-4)
    # one packed row per group: each row's tokens are its prefix plus its labels' suffixes, not 4 prompts
    assert packed.stats.forward_tokens < cached.stats.forward_tokens


def test_ppl_caches_compact_sums_and_reads_old_per_token_entries(llama_dir, tmp_path) -> None:
    from promptweave.infer.cache import ResponseCache
    from promptweave.infer.dispatch import CachedCaller

    recs = [Record(index=i, label=lab, rendered=f"{text(n, i)} Answer: {lab}", shot_ids=[])
            for i, n in enumerate(SIZES[:4]) for lab in ("A", "B")]
    prompts = [r.rendered for r in recs]
    lm = HFModel(str(llama_dir), device="cpu", dtype="float32", batch_size=4)
    with ResponseCache(tmp_path / "old.sqlite") as cache:  # a work dir from before: per-token lists
        CachedCaller(lm, cache).call("score", prompts, None)
        calls = lm.stats.forward_calls
        from_old = infer_ppl(lm, recs, cache)
        assert lm.stats.forward_calls == calls  # every old entry served: nothing recomputed
    with ResponseCache(tmp_path / "new.sqlite") as cache:
        fresh = infer_ppl(lm, recs, cache)
        stored = list(cache.get_many([CachedCaller(lm).key("score", p, None) for p in prompts]).values())
        assert all(set(v) == {"logprob_sum", "tokens"} for v in stored)  # not per-token lists
        calls = lm.stats.forward_calls
        assert [r.ppl for r in infer_ppl(lm, recs, cache)] == [r.ppl for r in fresh]
        assert lm.stats.forward_calls == calls
        # a form that needs every token's log-prob takes a compact entry as missing, and stores the list
        lists = CachedCaller(lm, cache).call("score", prompts[:2], None)
        assert all(isinstance(v, list) for v in lists) and lm.stats.forward_calls > calls
    for a, b in zip(from_old, fresh):
        assert a.prediction == b.prediction and a.ppl == pytest.approx(b.ppl, abs=1e-6)
