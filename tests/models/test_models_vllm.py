"""vLLM's in-process engine: runs only where vLLM and a GPU are present (skipped otherwise, never faked)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("vLLM needs a GPU", allow_module_level=True)
pytest.importorskip("vllm")

from promptweave.models.base import GenerationParams  # noqa: E402
from promptweave.models.hf import HFModel  # noqa: E402
from promptweave.models.vllm_backend import VLLMModel  # noqa: E402


def test_vllm_scores_and_generates_like_transformers(tiny_model_dir) -> None:
    v = VLLMModel(str(tiny_model_dir), engine_kwargs={"dtype": "float32", "gpu_memory_utilization": 0.2,
                                                      "enforce_eager": True})
    hf = HFModel(str(tiny_model_dir), device="cuda", dtype="float32")
    prompts = ["Question: What is two plus two? Answer: four", "Paris is the capital of France."]
    for a, b in zip(v.token_logprobs(prompts), hf.token_logprobs(prompts, shared_prefix=False), strict=True):
        assert a == pytest.approx(b, abs=1e-3)
    params = GenerationParams(max_out_len=5)
    assert v.generate(prompts, params) == hf.generate(prompts, params)


def test_one_engine_per_model_prefix_caching_on_and_one_call_per_batch(tiny_model_dir) -> None:
    kw = {"dtype": "float32", "gpu_memory_utilization": 0.2, "enforce_eager": True}
    a = VLLMModel(str(tiny_model_dir), engine_kwargs=kw)
    b = VLLMModel(str(tiny_model_dir), engine_kwargs=dict(kw))
    assert a.llm is b.llm  # the second model of the same path and settings shares the engine
    engine = a.llm.llm_engine
    cache_config = getattr(engine, "cache_config", None) or engine.vllm_config.cache_config  # V0 / V1 engines
    assert cache_config.enable_prefix_caching
    prompts = [f"Question {i}: what is two plus two? Answer:" for i in range(40)]
    calls = a.plan_calls("generate", prompts, GenerationParams(max_out_len=3))
    assert len(calls) == 1 and calls[0][0] == list(range(40))
    assert calls[0][1]() == a.generate(prompts, GenerationParams(max_out_len=3))
    groups = [[f"Q{i} Answer: {lab}" for lab in "AB"] for i in range(5)]
    [(where, run)] = a.plan_group_calls(groups)
    got = run()
    assert where == list(range(5)) and [len(g) for g in got] == [2] * 5
    assert got[0][0] == pytest.approx(a.token_logprobs(groups[0])[0], abs=1e-4)
