"""The transformers backend on a real tiny GPT-2 built offline in the test session."""
from __future__ import annotations

import pytest
import torch

from promptweave.errors import ModelError
from promptweave.models.base import GenerationParams
from promptweave.models.hf import HFModel, cut_at_stop


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    return HFModel(str(tiny_model_dir), device="cpu", dtype="float32", batch_size=3)


def direct_token_logprobs(lm: HFModel, ids: list[int]) -> list[float]:
    with torch.no_grad():
        logits = lm.model(torch.tensor([ids])).logits[0].float()
    lp = torch.log_softmax(logits[:-1], -1)
    return [float(lp[i, ids[i + 1]]) for i in range(len(ids) - 1)]


def test_segments_pass_token_ids_through(lm: HFModel) -> None:
    start = lm.tokenizer.convert_tokens_to_ids("<|im_start|>")
    ids = lm.encode([[start], "user\nhello", [7, 8]])
    assert ids[0] == start and ids[-2:] == [7, 8]
    assert ids[1:-2] == lm.tokenizer("user\nhello", add_special_tokens=False)["input_ids"]
    # the special token given as text is tokenized to the same single id
    assert lm.encode(["<|im_start|>"]) == [start]
    with pytest.raises(ModelError, match="segment"):
        lm.encode(["ok", 3.5])


def test_shared_prefix_scores_equal_direct_and_naive(lm: HFModel) -> None:
    ctx = "Question: What is the capital of France? Answer:"
    prompts = [ctx + " Paris", ctx + " Berlin is the capital", ctx + " A", ctx + " four"]
    shared = lm.token_logprobs(prompts, shared_prefix=True)
    naive = lm.token_logprobs(prompts, shared_prefix=False)
    for p, s, n in zip(prompts, shared, naive, strict=True):
        direct = direct_token_logprobs(lm, lm.encode(p))
        assert s == pytest.approx(direct, abs=1e-4)
        assert n == pytest.approx(direct, abs=1e-4)


def test_shared_prefix_forwards_fewer_tokens(lm: HFModel) -> None:
    ctx = "The quick brown fox jumps over the lazy dog. " * 4
    prompts = [ctx + f"Answer: {c}" for c in "ABCD"]
    lm.stats.forward_tokens = 0
    lm.token_logprobs(prompts, shared_prefix=True)
    shared_tokens = lm.stats.forward_tokens
    lm.stats.forward_tokens = 0
    lm.token_logprobs(prompts, shared_prefix=False)
    naive_tokens = lm.stats.forward_tokens
    one = len(lm.encode(prompts[0]))
    assert shared_tokens <= 1.3 * one < naive_tokens


def test_loglikelihood_matches_direct(lm: HFModel) -> None:
    ctx, cont = "Paris is the capital of", " France."
    [ll] = lm.loglikelihood([(ctx, cont)])
    ids = lm.encode(ctx)
    cont_ids = lm.tokenizer(cont, add_special_tokens=False)["input_ids"]
    direct = direct_token_logprobs(lm, ids + cont_ids)
    assert ll == pytest.approx(sum(direct[-len(cont_ids):]), abs=1e-4)


def test_greedy_generation_is_batch_independent(lm: HFModel) -> None:
    prompts = ["Question: What is two plus two?", "Paris", "The quick brown fox jumps over"]
    params = GenerationParams(max_out_len=6)
    batched = lm.generate(prompts, params)
    single = [lm.generate([p], params)[0] for p in prompts]
    assert batched == single
    assert all(isinstance(t, str) for t in batched)


def test_generation_stops_at_meta_template_eos(lm: HFModel, tiny_model_dir) -> None:
    prompt = "Paris is"
    ids = lm.encode(prompt)
    with torch.no_grad():
        greedy = lm.model.generate(torch.tensor([ids]), max_new_tokens=6, do_sample=False,
                                   pad_token_id=lm.pad_id, eos_token_id=None)[0, len(ids):].tolist()
    assert len(greedy) == 6
    first_new = next(i for i, t in enumerate(greedy) if t not in greedy[:i] and i >= 1)
    stop_tok = greedy[first_new]
    with_eos = HFModel(str(tiny_model_dir), device="cpu", dtype="float32", eos_token_id=stop_tok)
    [out] = with_eos.generate([prompt], GenerationParams(max_out_len=6))
    assert out == lm.tokenizer.decode(greedy[:first_new], skip_special_tokens=True)
    [short] = lm.generate([prompt], GenerationParams(max_out_len=2))
    assert short == lm.tokenizer.decode(greedy[:2], skip_special_tokens=True)


def test_sampled_decoding_is_seeded(lm: HFModel) -> None:
    p = GenerationParams(max_out_len=8, temperature=1.0, seed=123)
    assert lm.generate(["Answer:"], p) == lm.generate(["Answer:"], p)


def test_next_token_logprobs_match_direct(lm: HFModel) -> None:
    cands = [lm.tokenizer.convert_tokens_to_ids(t) for t in ("A", "B")]
    got = lm.next_token_logprobs(["Answer:", "Question: What is two plus two? Answer:"], cands)
    for prompt, row in zip(["Answer:", "Question: What is two plus two? Answer:"], got, strict=True):
        ids = lm.encode(prompt)
        with torch.no_grad():
            lp = torch.log_softmax(lm.model(torch.tensor([ids])).logits[0, -1], -1)
        assert row == pytest.approx([float(lp[c]) for c in cands], abs=1e-4)


def test_identity_changes_with_tokenizer_and_dtype(lm: HFModel, tiny_model_dir) -> None:
    ident = lm.identity()
    assert ident["tokenizer"] and ident["dtype"] == "float32"
    assert ident["path"].endswith(tiny_model_dir.name)


def test_cut_at_stop() -> None:
    assert cut_at_stop("a\nQ: b", ["Q:", "\n"]) == "a"
    assert cut_at_stop("abc", []) == "abc"


def test_unknown_dtype_is_a_typed_error(tiny_model_dir) -> None:
    with pytest.raises(ModelError, match="dtype"):
        HFModel(str(tiny_model_dir), dtype="float7")


def test_llama_shared_prefix_and_bos_segments(tmp_path) -> None:
    from tiny_lm import build_tiny_lm

    llama = HFModel(str(build_tiny_lm(tmp_path / "llama", arch="llama")), device="cpu", dtype="float32")
    bos = llama.tokenizer.bos_token_id
    prompts = [[[bos], "Question: capital of France? Answer:", f" {x}"] for x in ("Paris", "Berlin", "A")]
    shared = llama.token_logprobs(prompts, shared_prefix=True)
    for p, s in zip(prompts, shared, strict=True):
        ids = llama.encode(p)
        assert ids[0] == bos
        assert s == pytest.approx(direct_token_logprobs(llama, ids), abs=1e-4)


def test_chat_without_template_is_a_clear_error(lm: HFModel) -> None:
    with pytest.raises(ModelError, match="chat_template"):
        lm.chat([[{"role": "user", "content": "hi"}]], GenerationParams(max_out_len=2))


_TEMPLATE = ("{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{{ eos_token }}{% endfor %}"
             "{% if add_generation_prompt %}<|assistant|>{% endif %}")


def test_chat_ids_equal_transformers_and_a_hostile_template_is_typed(lm: HFModel) -> None:
    from promptweave.errors import ChatTemplateError

    conv = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}]
    old = lm.tokenizer.chat_template
    try:
        lm.tokenizer.chat_template = _TEMPLATE
        want = lm.tokenizer.apply_chat_template(conv, add_generation_prompt=True, tokenize=True)
        want = want["input_ids"] if hasattr(want, "keys") else want
        assert lm.prompt_ids(conv) == list(want)  # rendered by the sandboxed renderer, same ids
        # a tokenizer folder's template is input: run renders it under the same budgets as view
        lm.tokenizer.chat_template = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
        with pytest.raises(ChatTemplateError, match="max_steps"):
            lm.prompt_ids(conv)
    finally:
        lm.tokenizer.chat_template = old


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_rows_with_different_prefix_lengths_batched_together(tmp_path, tiny_model_dir, arch) -> None:
    from tiny_lm import build_tiny_lm

    path = tiny_model_dir if arch == "gpt2" else build_tiny_lm(tmp_path / "llama", arch="llama")
    big = HFModel(str(path), device="cpu", dtype="float32", batch_size=64)
    groups = [[f"Question: {q} Answer: {lab}" for lab in ("A", "B", "Paris", "four")]
              for q in ("short?", "a much longer question about the capital of France and Germany?", "two plus two?")]
    calls = big.stats.forward_calls
    got = big.token_logprobs_groups(groups)
    # one packed forward per row on CPU (its prefix once, its labels' suffixes after it): no padding, and a row's
    # scores do not depend on the rows beside it
    assert big.stats.forward_calls - calls == len(groups)
    assert big.stats.forward_tokens < sum(len(big.encode(p)) for g in groups for p in g) / 2
    for g, rows in zip(groups, got, strict=True):
        for prompt, lps in zip(g, rows, strict=True):
            assert lps == pytest.approx(direct_token_logprobs(big, big.encode(prompt)), abs=1e-4)


def test_scoring_never_truncates_silently(tiny_model_dir) -> None:
    short = HFModel(str(tiny_model_dir), device="cpu", dtype="float32", max_seq_len=8)
    with pytest.raises(ModelError, match="more than max_seq_len=8"):
        short.token_logprobs(["The quick brown fox jumps over the lazy dog. " * 3])
