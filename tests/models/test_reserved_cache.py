"""Generation with the KV cache that writes each step in place (``hf_reserved_cache``) gives what
transformers' default cache gives: greedy texts byte for byte, seeded samples alike, on Llama and GPT-2;
a cache reordered or cut between steps is taken back whole."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from promptweave.models.base import GenerationParams  # noqa: E402
from promptweave.models.hf import HFModel  # noqa: E402
from promptweave.models.hf_reserved_cache import reserved_cache  # noqa: E402

WORDS = "the quick brown fox jumps over the lazy dog Paris is the capital of France".split()
SIZES = [3, 40, 5, 38, 2, 30, 7, 36, 4, 25, 9]


def text(n: int, k: int) -> str:
    return " ".join(WORDS[(k + j) % len(WORDS)] for j in range(n))


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    from tiny_lm import build_tiny_lm

    return build_tiny_lm(tmp_path_factory.mktemp("llama"), arch="llama", hidden=64, layers=2, seed=5)


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_in_place_cache_gives_the_default_caches_outputs(arch, llama_dir, tiny_model_dir) -> None:
    path = llama_dir if arch == "llama" else tiny_model_dir
    ours = HFModel(str(path), device="cpu", dtype="float32", batch_size=4)
    default = HFModel(str(path), device="cpu", dtype="float32", batch_size=4)
    default._reserve = False  # transformers' own cache
    prompts = [text(n, i) for i, n in enumerate(SIZES)]
    greedy = GenerationParams(max_out_len=12)
    got = ours.generate(prompts, greedy)
    assert ours._reserve is True  # the in-place cache was taken, not refused
    assert got == default.generate(prompts, greedy) and len(set(got)) > 3
    sampled = GenerationParams(max_out_len=8, temperature=0.9, seed=11)
    assert ours.generate(prompts, sampled) == default.generate(prompts, sampled)


def test_layers_keep_the_concatenated_values_through_reorder_and_crop(llama_dir) -> None:
    lm = HFModel(str(llama_dir), device="cpu", dtype="float32")
    cache = reserved_cache(torch, lm.model, room=2)  # room for 2 steps; the test adds 4: it must grow
    assert cache is not None
    layer = cache.layers[0]
    g = torch.Generator().manual_seed(0)
    steps = [torch.randn(3, 2, n, 8, generator=g) for n in (5, 1, 1, 1, 1)]
    want_k = torch.cat(steps, dim=-2)
    for k in steps[:3]:
        keys, values = layer.update(k, k + 1)
    assert torch.equal(keys, want_k[..., :7, :]) and torch.equal(values, want_k[..., :7, :] + 1)
    layer.batch_select_indices(torch.tensor([2, 0]))  # changed from outside (beam search, say)
    keys, _ = layer.update(steps[3][[2, 0]], steps[3][[2, 0]] + 1)
    assert torch.equal(keys, want_k[[2, 0]][..., :8, :])
    layer.crop(-3)
    keys, values = layer.update(steps[4][[2, 0]], steps[4][[2, 0]] + 1)
    assert torch.equal(keys, torch.cat([want_k[[2, 0]][..., :5, :], steps[4][[2, 0]]], dim=-2))
    assert torch.equal(values, keys + 1) and layer.get_seq_length() == 6


def test_a_model_with_its_own_cache_implementation_gets_the_default(llama_dir) -> None:
    lm = HFModel(str(llama_dir), device="cpu", dtype="float32")
    lm.model.generation_config.cache_implementation = "static"
    try:
        assert reserved_cache(torch, lm.model, room=4) is None
    finally:
        lm.model.generation_config.cache_implementation = None
