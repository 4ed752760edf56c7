from __future__ import annotations

import pytest

from promptweave.errors import ConfigError
from promptweave.models import build_model, generation_params
from promptweave.models.base import ScoringModel, TextModel
from promptweave.models.hf import HFModel
from promptweave.models.openai_compat import OpenAICompatModel
from promptweave.sandbox.env import env_policy


def test_openai_config_in_opencompass_form(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    with env_policy(["OPENAI_API_KEY"]):  # key='ENV' sends the variable the user allowed (--allow-env)
        m = _build_sdk()
    assert isinstance(m, OpenAICompatModel)
    assert (m.name, m.model, m.base_url, m.api_key) == ("qwen-api", "qwen2", "http://127.0.0.1:9/v1", "from-env")
    assert (m.rpm, m.max_retries, m.concurrency) == (120.0, 3, 32)


def _build_sdk():
    return build_model({"type": "opencompass.models.OpenAISDK", "abbr": "qwen-api", "path": "qwen2",
                        "openai_api_base": "http://127.0.0.1:9/v1/chat/completions", "key": "ENV",
                        "query_per_second": 2, "retry": 3, "batch_size": 32})


def test_hf_config_with_meta_template_eos(tiny_model_dir) -> None:
    m = build_model({"type": "HuggingFaceCausalLM", "abbr": "tiny", "path": str(tiny_model_dir),
                     "model_kwargs": {"torch_dtype": "torch.float32", "device_map": "cpu"}, "batch_size": 2,
                     "meta_template": {"round": [], "eos_token_id": 5}})
    assert isinstance(m, HFModel) and isinstance(m, TextModel) and isinstance(m, ScoringModel)
    assert m.eos_ids[0] == 5 and m.batch_size == 2 and m.dtype_name == "float32"


def test_unknown_type_and_missing_fields_are_typed_errors() -> None:
    with pytest.raises(ConfigError, match="unknown model type"):
        build_model({"type": "Mystery", "path": "x"})
    with pytest.raises(ConfigError, match="base_url"):
        build_model({"type": "OpenAI", "path": "gpt"})
    with pytest.raises(ConfigError, match="path"):
        build_model({"type": "HuggingFaceCausalLM"})


def test_generation_params_from_model_and_inferencer() -> None:
    p = generation_params({"max_out_len": 100, "generation_kwargs": {"temperature": 0.7, "do_sample": True,
                                                                      "top_p": 0.9, "top_k": 5},
                           "stop_words": ["<|im_end|>"]}, max_out_len=20, stop=["\n\n"])
    assert (p.max_out_len, p.temperature, p.top_p, p.stop, p.extra) == (20, 0.7, 0.9, ("\n\n", "<|im_end|>"),
                                                                         {"top_k": 5})
    assert generation_params({"generation_kwargs": {"do_sample": False, "temperature": 1.0}}).temperature == 0.0
