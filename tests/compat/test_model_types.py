"""Model ``type=`` names of the reference model configs → backend and arguments; unknown ones are typed errors."""
from __future__ import annotations

import pytest

from promptweave.compat.models import (
    MODEL_TYPES,
    UNSUPPORTED_MODEL_TYPES,
    model_notes,
    resolve_model_type,
)
from promptweave.engine.spec import ModelSpec
from promptweave.errors import ConfigError, UnsupportedError
from promptweave.models import build_model, generation_params
from promptweave.models.hf import HFModel
from promptweave.models.openai_compat import OpenAICompatModel
from promptweave.sandbox.env import env_policy

# every type= used by opencompass 0.5.4's configs/models and AISBench's configs/models
USED = ["HuggingFacewithChatTemplate", "HuggingFaceBaseModel", "TurboMindModelwithChatTemplate", "HuggingFaceCausalLM",
        "VLLMwithChatTemplate", "TurboMindModel", "VLLM", "OpenAISDK", "OpenAI", "HuggingFace", "LLaMA2AccessoryModel",
        "Gemini", "OpenAISDKStreaming", "ModelScopeCausalLM", "LmdeployPytorchModel", "Claude", "BailingAPI",
        "TeleChatStream", "TeleChat", "Mixtral", "InternLM", "BlueLMAPI", "AlayaLM", "VLLMCustomAPIChat",
        "VLLMCustomAPI", "TritonCustomAPI", "TGICustomAPI", "VLLMOfflineVLModel", "VITAGenerateAPI",
        "QwenImageEditModel", "MindieStreamApi", "HuggingFaceQwen2VLwithChatTemplate"]


@pytest.mark.parametrize("name", USED)
def test_every_used_type_maps_or_is_named(name) -> None:
    assert (name in MODEL_TYPES) != (name in UNSUPPORTED_MODEL_TYPES)
    if name in UNSUPPORTED_MODEL_TYPES:
        with pytest.raises(UnsupportedError, match=rf"\[PW160\] m\.py: models\[1\]\.type: model type {name}"):
            resolve_model_type({"type": f"opencompass.models.{name}"}, file="m.py", field="models[1].type")


@pytest.mark.parametrize("name, backend, kind", [
    ("HuggingFacewithChatTemplate", "hf", "api"), ("HuggingFaceBaseModel", "hf", "lm"),
    ("HuggingFaceCausalLM", "hf", "lm"), ("HuggingFace", "hf", "lm"), ("TurboMindModel", "vllm", "lm"),
    ("TurboMindModelwithChatTemplate", "vllm", "api"), ("VLLM", "vllm", "lm"),
    ("VLLMwithChatTemplate", "vllm", "api"), ("OpenAI", "openai", "api"), ("OpenAISDK", "openai", "api"),
    ("VLLMCustomAPIChat", "openai", "api"), ("VLLMCustomAPI", "openai", "lm")])
def test_backend_and_prompt_kind(name, backend, kind) -> None:
    mt = resolve_model_type({"type": name})
    assert (mt.backend, mt.kind) == (backend, kind)
    assert ModelSpec.from_config({"type": name, "abbr": "m"}).kind == kind


def test_unknown_type_is_a_typed_error() -> None:
    with pytest.raises(UnsupportedError, match="unknown model type"):
        resolve_model_type({"type": "Mystery"})
    with pytest.raises(ConfigError, match="unknown model type"):
        build_model({"type": "Mystery", "path": "x"})


def test_chat_template_model_loads_on_transformers_and_answers_messages(tiny_model_dir) -> None:
    m = build_model({"type": "HuggingFacewithChatTemplate", "abbr": "t", "path": str(tiny_model_dir),
                     "max_seq_len": 256, "batch_size": 3, "model_kwargs": {"device_map": "cpu",
                                                                          "trust_remote_code": True},
                     "tokenizer_kwargs": {"padding_side": "left"}, "run_cfg": {"num_gpus": 1}})
    assert isinstance(m, HFModel) and m.batch_size == 3 and m.max_seq_len == 256
    # the run path renders messages with the tokenizer's own apply_chat_template
    m.tokenizer.chat_template = "{% for m in messages %}<|im_start|>{{ m['content'] }}<|im_end|>{% endfor %}"
    [out] = m.chat([[{"role": "user", "content": "hello"}]], generation_params({}, max_out_len=2))
    assert isinstance(out, str)


def test_openai_types_take_their_arguments(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with env_policy(["OPENAI_API_KEY"]):  # key='ENV' sends the variable the user allowed (--allow-env)
        m = build_model({"type": "OpenAI", "abbr": "gpt", "path": "gpt-4o", "key": "ENV", "query_per_second": 1,
                         "openai_api_base": "http://127.0.0.1:9/v1", "batch_size": 8, "max_seq_len": 4096})
    assert isinstance(m, OpenAICompatModel) and (m.model, m.rpm, m.concurrency, m.api_key) == ("gpt-4o", 60.0, 8, "k")
    ais = build_model({"type": "VLLMCustomAPI", "abbr": "svc", "path": "", "model": "served", "host_ip": "127.0.0.1",
                       "host_port": 9, "retry": 2, "batch_size": 4})
    # AISBench's retry=2 is two attempts in all: one retry
    assert ais.base_url == "http://127.0.0.1:9/v1" and ais.endpoint == "completions" and ais.max_retries == 1


def test_generation_arguments_of_turbomind_and_vllm_configs() -> None:
    p = generation_params({"gen_config": {"top_k": 1, "temperature": 1e-6, "top_p": 0.9, "max_new_tokens": 4096},
                           "stop_words": ["<|im_end|>"]})
    assert (p.max_out_len, p.temperature, p.top_p, p.extra, p.stop) == (4096, 1e-6, 0.9, {"top_k": 1},
                                                                        ("<|im_end|>",))
    assert generation_params({"max_out_len": 7, "generation_kwargs": {"temperature": 0}},
                             generation_kwargs={"temperature": 0.7, "do_sample": True}).temperature == 0.7


def test_ignored_arguments_are_named() -> None:
    notes = model_notes({"type": "TurboMindModelwithChatTemplate", "run_cfg": {"num_gpus": 1}, "stream": True})
    assert any(n.startswith("TurboMindModelwithChatTemplate: LMDeploy TurboMind") for n in notes)
    assert any(n.startswith("run_cfg is ignored") for n in notes) and any("stream is ignored" in n for n in notes)
    # stream=False is what is done anyway: nothing to say
    assert not any("stream" in n for n in model_notes({"type": "VLLMCustomAPIChat", "stream": False}))


def test_peft_adapters_are_refused() -> None:
    with pytest.raises(UnsupportedError, match="peft_path"):
        build_model({"type": "HuggingFaceCausalLM", "path": "x", "peft_path": "adapter"})


def test_chat_template_model_without_meta_template_gets_messages(tiny_model_dir) -> None:
    """As the reference: HUMAN/SYSTEM → user (system on purpose), BOT → assistant, then apply_chat_template."""
    from promptweave.engine import DatasetSpec, PromptBuilder

    ds = DatasetSpec.from_config({"abbr": "d", "reader_cfg": {"input_columns": ["q"]}, "infer_cfg": {
        "prompt_template": {"template": {"begin": [{"role": "SYSTEM", "prompt": "Be brief."}],
                                         "round": [{"role": "HUMAN", "prompt": "{q}"}, {"role": "BOT"}]}},
        "retriever": {"type": "ZeroRetriever"}}}, train=[], test=[{"q": "hi"}])
    cfg = {"abbr": "chat", "type": "HuggingFacewithChatTemplate", "path": str(tiny_model_dir),
           "model_kwargs": {"device_map": "cpu"}}
    [rec] = PromptBuilder(ds, ModelSpec.from_config(cfg)).build_row(0)
    # the empty SYSTEM slot of the round is merged too, as the reference's API template parser does
    assert [m["role"] for m in rec.rendered] == ["HUMAN"] and rec.rendered[0]["prompt"] == "Be brief.\nhi\n"
    m = build_model(cfg)
    m.tokenizer.chat_template = ("{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{% endfor %}"
                                 "{% if add_generation_prompt %}[assistant]{% endif %}")
    seen = []
    real = m.generate
    m.generate = lambda prompts, params: seen.extend(prompts) or real(prompts, params)
    m.chat([rec.rendered], generation_params({}, max_out_len=1))
    assert m.tokenizer.decode(seen[0][0]) == "[user]Be brief.\nhi\n[assistant]"
