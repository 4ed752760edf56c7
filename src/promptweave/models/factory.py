"""Building a backend from a model config (OpenCompass / AISBench names accepted).

The config may be a dict or any object with the same attributes (the engine's typed
model config). Only the backend is built here; prompts are the engine's business.
"""
from __future__ import annotations

import os
from typing import Any, Mapping

from promptweave.errors import ConfigError
from promptweave.models.base import GenerationParams

HF_TYPES = {"TransformersModel", "HFModel", "HuggingFace", "HuggingFaceCausalLM", "HuggingFaceBaseModel", "HuggingFacewithChatTemplate",
            "HuggingFaceChatGLM3", "hf", "transformers"}
OPENAI_TYPES = {"OpenAICompatModel", "OpenAI", "OpenAISDK", "OpenAIAsync", "OpenAICompat", "VLLMAPI", "VLLMCustomAPIChat",
                "LMDeployAPI", "openai", "openai_compat", "api"}
VLLM_TYPES = {"VLLM", "VLLMwithChatTemplate", "vllm"}


def cfg_get(cfg: Any, key: str, default: Any = None) -> Any:
    """Read a field from a dict or an attribute-style config object."""
    if isinstance(cfg, Mapping):
        return cfg.get(key, default)
    return getattr(cfg, key, default)


def type_name(cfg: Any) -> str:
    t = cfg_get(cfg, "type")
    if t is None:
        return ""
    if isinstance(t, str):
        return t.rsplit(".", 1)[-1]
    return getattr(t, "__name__", str(t))


def model_name(cfg: Any) -> str:
    return str(cfg_get(cfg, "abbr") or cfg_get(cfg, "name") or cfg_get(cfg, "path") or "model")


def meta_eos(cfg: Any) -> Any:
    meta = cfg_get(cfg, "meta_template")
    return cfg_get(meta, "eos_token_id") if meta is not None else None


def generation_params(cfg: Any, *, max_out_len: int | None = None, stop: Any = None) -> GenerationParams:
    """Decoding settings from a model config (``max_out_len``, ``generation_kwargs``, ``stop_words``...)."""
    try:
        return _generation_params(cfg, max_out_len=max_out_len, stop=stop)
    except (TypeError, ValueError, OverflowError) as exc:  # reliability: a wrongly typed setting is typed
        raise ConfigError(f"a decoding setting has the wrong type: {exc}",
                          field="max_out_len / generation_kwargs / stop_words / temperature",
                          expected="numbers for max_out_len and temperature, strings for stop words") from None


def _generation_params(cfg: Any, *, max_out_len: int | None = None, stop: Any = None) -> GenerationParams:
    gk = dict(cfg_get(cfg, "generation_kwargs") or {})
    temperature = float(gk.pop("temperature", cfg_get(cfg, "temperature", 0.0)) or 0.0)
    if gk.pop("do_sample", None) is False:
        temperature = 0.0
    top_p = gk.pop("top_p", None)
    seed = gk.pop("seed", cfg_get(cfg, "seed"))
    stops = list(stop or []) + list(cfg_get(cfg, "stop_words") or []) + list(gk.pop("stop", None) or [])
    gk.pop("max_new_tokens", None)
    extra = {k: v for k, v in gk.items() if k in ("top_k", "repetition_penalty", "min_p")}
    return GenerationParams(max_out_len=int(max_out_len or cfg_get(cfg, "max_out_len") or 512),
                            temperature=temperature, top_p=top_p, stop=tuple(dict.fromkeys(stops)), seed=seed,
                            extra=extra)


def build_model(cfg: Any, *, retry_overrides: Mapping[str, Any] | None = None) -> Any:
    """A model backend from its config; raises :class:`ConfigError` naming the bad field."""
    kind = type_name(cfg)
    name = model_name(cfg)
    if kind in OPENAI_TYPES:
        from promptweave.models.openai_compat import OpenAICompatModel

        url = cfg_get(cfg, "openai_api_base") or cfg_get(cfg, "base_url") or cfg_get(cfg, "url")
        if not url:
            raise ConfigError("an API model needs base_url (or openai_api_base)", field="models[].base_url",
                              value=name)
        if isinstance(url, (list, tuple)):
            url = url[0]
        key = cfg_get(cfg, "api_key", cfg_get(cfg, "key"))
        if key == "ENV" or key is None:
            key = os.environ.get(cfg_get(cfg, "api_key_env") or "OPENAI_API_KEY")
        qps = cfg_get(cfg, "query_per_second")
        kw: dict[str, Any] = dict(
            name=name,
            concurrency=int(cfg_get(cfg, "concurrency") or cfg_get(cfg, "max_workers") or cfg_get(cfg, "batch_size")
                            or 16),
            rpm=cfg_get(cfg, "rpm") or (float(qps) * 60 if qps else None),
            max_retries=int(cfg_get(cfg, "retry", cfg_get(cfg, "max_retries", 6))),
            timeout=float(cfg_get(cfg, "timeout", 120.0)),
            extra_body=cfg_get(cfg, "extra_body"),
            revision=cfg_get(cfg, "revision"),
        )
        # a text ("lm") model behind an OpenAI server gets /completions; a chat ("api") model gets chat
        endpoint = cfg_get(cfg, "endpoint") or ("completions" if cfg_get(cfg, "kind") == "lm" else "chat")
        kw["endpoint"] = "completions" if endpoint in ("completion", "completions") else endpoint
        if cfg_get(cfg, "backoff_base") is not None:
            kw["backoff_base"] = float(cfg_get(cfg, "backoff_base"))
        kw.update(retry_overrides or {})
        return OpenAICompatModel(str(url), str(cfg_get(cfg, "model") or cfg_get(cfg, "path") or name),
                                 api_key=key, **kw)
    if kind in HF_TYPES:
        from promptweave.models.hf import HFModel

        path = cfg_get(cfg, "path")
        if not path:
            raise ConfigError("a transformers model needs a path", field="models[].path", value=name)
        mk = dict(cfg_get(cfg, "model_kwargs") or {})
        dtype = str(mk.pop("torch_dtype", mk.pop("dtype", cfg_get(cfg, "dtype", "auto")))).replace("torch.", "")
        device = mk.pop("device_map", cfg_get(cfg, "device", "auto"))
        if not isinstance(device, str) or device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
            device = "auto"
        return HFModel(str(path), name=name, tokenizer_path=cfg_get(cfg, "tokenizer_path"),
                       revision=cfg_get(cfg, "revision"), device=device, dtype=dtype,
                       batch_size=int(cfg_get(cfg, "batch_size") or 8), max_seq_len=cfg_get(cfg, "max_seq_len"),
                       eos_token_id=meta_eos(cfg), model_kwargs=mk,
                       tokenizer_kwargs=dict(cfg_get(cfg, "tokenizer_kwargs") or {}))
    if kind in VLLM_TYPES:
        from promptweave.models.vllm_backend import VLLMModel

        mk = dict(cfg_get(cfg, "model_kwargs") or {})
        return VLLMModel(str(cfg_get(cfg, "path")), name=name, max_seq_len=cfg_get(cfg, "max_seq_len"),
                         eos_token_id=meta_eos(cfg), engine_kwargs=mk)
    raise ConfigError("unknown model type", field="models[].type", value=kind or None,
                      expected="a transformers type (HuggingFaceCausalLM, ...), an OpenAI-compatible type "
                               "(OpenAI, OpenAISDK, ...) or VLLM")


def load_token_counter(cfg: Any) -> Any:
    """A ``count(rendered) -> int`` with the model's own tokenizer (loaded alone, no weights), or None.

    Local models use ``tokenizer_path`` or ``path``; an HTTP model only when its config
    names a ``tokenizer_path`` (the served model's tokenizer, available locally).
    """
    kind = type_name(cfg)
    if kind in OPENAI_TYPES:
        path = cfg_get(cfg, "tokenizer_path")
    elif kind in HF_TYPES or kind in VLLM_TYPES:
        path = cfg_get(cfg, "tokenizer_path") or cfg_get(cfg, "path")
    else:
        path = None
    if not path:
        return None
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError("counting tokens for max_seq_len needs transformers: pip install 'promptweave[hf]'",
                          field="models[].tokenizer_path", value=path) from exc
    from promptweave.models.hf import token_counter

    try:
        tok = AutoTokenizer.from_pretrained(str(path), revision=cfg_get(cfg, "revision"),
                                            **dict(cfg_get(cfg, "tokenizer_kwargs") or {}))
    except OSError as exc:
        raise ConfigError(f"cannot load the tokenizer to fit prompts into max_seq_len: {exc}",
                          field="models[].tokenizer_path", value=str(path)) from None
    return token_counter(tok)
