"""Model ``type=`` names of OpenCompass / AISBench model configs → promptweave backends.

Each name maps to one of three backends (``hf`` transformers, ``vllm`` in-process engine, ``openai`` any
OpenAI-compatible HTTP server) and to how prompts reach it: ``lm`` (rendered text through the meta template) or
``api`` (chat messages; a local ``...withChatTemplate`` model turns them into text with the tokenizer's own
``apply_chat_template``, as the reference does). LMDeploy's TurboMind engine is not available here, so TurboMind
configs run on the vLLM backend with the same path and limits (noted in the plan). Names that need a vendor's own
protocol are a typed :class:`~promptweave.errors.UnsupportedError`, never guessed.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from promptweave.compat.service_types import default_meta, is_service_type
from promptweave.errors import UnsupportedError


@dataclass(frozen=True)
class ModelType:
    """How one reference model class is served here."""

    backend: str  # hf | vllm | openai
    kind: str  # lm (text + meta template) | api (chat messages)
    note: str = ""

    @property
    def requires(self) -> tuple[str, ...]:
        """The optional packages this backend imports (``promptweave.extras``), checked at plan time."""
        return BACKEND_REQUIRES.get(self.backend, ())


# what each backend imports beyond promptweave's own dependencies (the HTTP backend needs nothing more)
BACKEND_REQUIRES: dict[str, tuple[str, ...]] = {"hf": ("torch", "transformers"), "vllm": ("vllm",)}


_HF_NOTE = "runs on the transformers backend"
_CHAT_TEMPLATE = "chat messages rendered with the tokenizer's apply_chat_template"
_TURBOMIND = "LMDeploy TurboMind is not available; runs on the vLLM backend with the same path and limits"

MODEL_TYPES: dict[str, ModelType] = {
    # transformers
    "HuggingFace": ModelType("hf", "lm", _HF_NOTE),
    "HuggingFaceCausalLM": ModelType("hf", "lm", _HF_NOTE),
    "HuggingFaceBaseModel": ModelType("hf", "lm", _HF_NOTE),
    "HuggingFacewithChatTemplate": ModelType("hf", "api", _CHAT_TEMPLATE),
    "HuggingFaceChatGLM3": ModelType("hf", "api", _CHAT_TEMPLATE),
    "ModelScopeCausalLM": ModelType("hf", "lm", "a ModelScope checkpoint folder loaded with transformers"),
    "TransformersModel": ModelType("hf", "lm"),
    "HFModel": ModelType("hf", "lm"),
    "hf": ModelType("hf", "lm"),
    "transformers": ModelType("hf", "lm"),
    # vLLM (and LMDeploy configs, on vLLM)
    "VLLM": ModelType("vllm", "lm"),
    "VLLMwithChatTemplate": ModelType("vllm", "api", _CHAT_TEMPLATE),
    "vllm": ModelType("vllm", "lm"),
    "TurboMindModel": ModelType("vllm", "lm", _TURBOMIND),
    "TurboMindModelwithChatTemplate": ModelType("vllm", "api", _TURBOMIND + "; " + _CHAT_TEMPLATE),
    "LmdeployPytorchModel": ModelType("vllm", "lm", _TURBOMIND),
    # OpenAI-compatible HTTP
    "OpenAI": ModelType("openai", "api"),
    "OpenAISDK": ModelType("openai", "api"),
    "OpenAISDKStreaming": ModelType("openai", "api", "streaming is not used; the full reply is read at once"),
    "OpenAIAsync": ModelType("openai", "api"),
    "OpenAICompat": ModelType("openai", "api"),
    "OpenAICompatModel": ModelType("openai", "api"),
    "LightllmChatAPI": ModelType("openai", "api"),
    "LiteLLMAPI": ModelType("openai", "api", "sent to an OpenAI-compatible endpoint (openai_api_base)"),
    "DeepseekAPI": ModelType("openai", "api"),
    "MoonShot": ModelType("openai", "api"),
    "StepFun": ModelType("openai", "api"),
    "VLLMAPI": ModelType("openai", "api"),
    "LMDeployAPI": ModelType("openai", "api"),
    "openai": ModelType("openai", "api"),
    "openai_compat": ModelType("openai", "api"),
    "api": ModelType("openai", "api"),
    # AISBench service models (vLLM / TGI / Triton / MindIE servers speak the OpenAI protocol)
    # (these six send AISBench's own request bodies: compat/service_types.py, models/aisbench_service.py)
    "VLLMCustomAPI": ModelType("openai", "lm", "sent to the server's /v1/completions"),
    "VLLMCustomAPIStream": ModelType("openai", "lm", "sent to the server's /v1/completions, streamed"),
    "VLLMCustomAPIChat": ModelType("openai", "api"),
    "VLLMCustomAPIChatStream": ModelType("openai", "api"),
    "VllmMultiturnAPIChatStream": ModelType("openai", "api"),
    "VLLMFunctionCallAPIChat": ModelType("openai", "api"),
    "MindieStreamApi": ModelType("openai", "api", "MindIE's OpenAI-compatible endpoint; streaming is not used"),
}

# Reference model classes that need a vendor protocol, an agent framework or a multimodal engine.
UNSUPPORTED_MODEL_TYPES: dict[str, str] = {
    **{n: "a vendor API with its own protocol; serve the model behind an OpenAI-compatible endpoint and use "
          "type='OpenAISDK' with openai_api_base" for n in (
        "Claude", "ClaudeSDK", "ClaudeAllesAPIN", "Gemini", "GeminiSDK", "BaiChuan", "BailingAPI", "BlueLMAPI",
        "ByteDance", "Doubao", "ERNIEBot", "Hunyuan", "MiniMax", "MiniMaxChatCompletionV2", "Nanbeige", "PanGu",
        "Qwen", "Rendu", "SenseTime", "TeleChat", "TeleChatStream", "UniGPT", "XunFei", "XunFeiSpark", "Yayi",
        "YiAPI", "ZhiPuAI", "ZhiPuV2AI", "KrGPT", "AI360GPT", "Mistral", "TGICustomAPI", "TGICustomAPIStream",
        "TritonCustomAPI", "TritonCustomAPIStream", "VITAGenerateAPI", "OpenAISDKResponse", "OpenAISDKRollout")},
    **{n: "a model class with its own loading code (not a plain transformers checkpoint); convert it to "
          "HuggingFaceCausalLM or serve it behind an OpenAI-compatible endpoint" for n in (
        "LLaMA2AccessoryModel", "Llama2", "Llama2Chat", "Mixtral", "InternLM", "InternTrain", "GLM130B",
        "AlayaLM", "HuggingFaceChatGLM", "LightllmAPI")},
    **{n: "a multimodal or function-calling model class; promptweave runs text models only" for n in (
        "HuggingFaceQwen2VLwithChatTemplate", "VLLMOfflineVLModel", "QwenImageEditModel",
        "MiniMaxChatCompletionV", "ZhiPuV")},
}

# What a ``...withChatTemplate`` model without a meta_template uses in the reference: system turns become user
# turns on purpose, and the tokenizer's chat template does the rest.
CHAT_TEMPLATE_META = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "SYSTEM", "api_role": "HUMAN"},
                                {"role": "BOT", "api_role": "BOT", "generate": True}]}


def default_meta_template(cfg: Mapping[str, Any]) -> Any:
    """The meta template a model config means when it gives none: local chat-template models', and AISBench's
    chat service classes' own (HUMAN / BOT rounds with a reserved SYSTEM role)."""
    name = type_name(cfg.get("type"))
    if is_service_type(name):
        return default_meta(name)
    mt = MODEL_TYPES.get(name)
    if mt is not None and mt.backend in ("hf", "vllm") and mt.kind == "api":
        return CHAT_TEMPLATE_META
    return None


def default_dialect(cfg: Mapping[str, Any]) -> str:
    """AISBench's service classes render prompts as AISBench's parsers do; every other type as promptweave."""
    return "aisbench" if is_service_type(type_name(cfg.get("type"))) else "promptweave"


# Arguments read by some reference class that promptweave does not use, and why (said once per model).
IGNORED_ARGS: dict[str, str] = {
    "run_cfg": "promptweave schedules tasks itself (num_gpus / num_procs are not used)",
    "attr": "AISBench's local/service marker; the type decides the backend",
    "stream": "the body says stream=false and the reply is read whole",
    "request_rate": "only AISBench's service model types pace requests by it; use rpm or query_per_second",
    "use_timestamp": "AISBench's trace replay is not supported",
    "trust_remote_code": "remote code in checkpoints is never run",
    "end_str": "use stop_words",
    "fastchat_template": "use the tokenizer's chat template or a meta_template",
    "drop_middle": "prompts are cut from the left to fit max_seq_len",
    "pad_token_id": "the tokenizer's pad token is used",
    "mode": "prompts are cut from the left to fit max_seq_len",
    "tokenizer_only": "the model is always loaded",
    "verbose": "",
    "lmdeploy_path": "",
    "backend": "",
}


def type_name(t: Any) -> str:
    """``opencompass.models.VLLM`` / a class / ``'VLLM'`` → ``'VLLM'``."""
    if t is None:
        return ""
    if isinstance(t, str):
        return t.rsplit(".", 1)[-1]
    return str(getattr(t, "__name__", t))


def resolve_model_type(cfg: Mapping[str, Any] | Any, *, file: str | None = None,
                       field: str = "models[].type") -> ModelType:
    """The :class:`ModelType` a model config names, or a typed error naming the type and what to use."""
    raw = cfg.get("type") if isinstance(cfg, Mapping) else getattr(cfg, "type", None)
    name = type_name(raw)
    found = MODEL_TYPES.get(name)
    if found is not None:
        return found
    why = UNSUPPORTED_MODEL_TYPES.get(name)
    if why is not None:
        raise UnsupportedError(f"model type {name} is not supported: {why}", file=file, field=field, value=name)
    near = did_you_mean(name, [*MODEL_TYPES, *UNSUPPORTED_MODEL_TYPES])
    if near:
        raise UnsupportedError(f"unknown model type; did you mean {near!r}?", file=file, field=field,
                               value=name, expected=f"type={near!r}, or another model type promptweave runs")
    raise UnsupportedError("unknown model type", file=file, field=field, value=name or None,
                           expected="a transformers type (HuggingFaceCausalLM, HuggingFacewithChatTemplate, ...), "
                                    "a vLLM / TurboMind type (VLLM, TurboMindModelwithChatTemplate, ...) or an "
                                    "OpenAI-compatible type (OpenAISDK, VLLMCustomAPIChat, ...)")


def did_you_mean(name: str, known: list[str]) -> str | None:
    """The known model type ``name`` is most likely a typo of (case first: ``HuggingFaceCausalLm``), or None."""
    if not name:
        return None
    folded = [k for k in known if k.lower() == name.lower()]
    if folded:
        return folded[0]
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
    return close[0] if close else None


def model_notes(cfg: Mapping[str, Any]) -> list[str]:
    """What of this model config is not used, one line each (for the plan and ``lint``)."""
    name = type_name(cfg.get("type"))
    mt = MODEL_TYPES.get(name)
    out = []
    if mt is not None and mt.note and mt.note not in (_HF_NOTE, _CHAT_TEMPLATE):  # only what differs
        out.append(f"{name}: {mt.note}")
    for key, why in IGNORED_ARGS.items():
        if key == "stream" and (not cfg.get(key) or is_service_type(name)):
            continue  # stream=False is what is done anyway; AISBench's service classes stream as it does
        if key == "request_rate" and is_service_type(name):
            continue  # AISBench's service classes pace request starts by it (models/pacing.py)
        if key in cfg and why:
            out.append(f"{key} is ignored: {why}")
    if "peft_path" in cfg and cfg.get("peft_path"):
        out.append("peft_path is ignored: merge the adapter into the checkpoint first")
    return out
