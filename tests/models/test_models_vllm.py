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
    for a, b in zip(v.token_logprobs(prompts), hf.token_logprobs(prompts, shared_prefix=False)):
        assert a == pytest.approx(b, abs=1e-3)
    params = GenerationParams(max_out_len=5)
    assert v.generate(prompts, params) == hf.generate(prompts, params)
