"""Building a backend from a model config (OpenCompass / AISBench names accepted).

The config may be a dict or any object with the same attributes (the engine's typed
model config). Only the backend is built here; prompts are the engine's business.
"""
from __future__ import annotations

from typing import Any, Mapping

from promptweave.compat.models import MODEL_TYPES, resolve_model_type
from promptweave.errors import ConfigError, PromptweaveError, UnsupportedError
from promptweave.models.base import GenerationParams
from promptweave.models.pacing import traffic_settings

# kept for callers that test membership; the registry (compat/models.py) is the source
HF_TYPES = {n for n, t in MODEL_TYPES.items() if t.backend == "hf"}
OPENAI_TYPES = {n for n, t in MODEL_TYPES.items() if t.backend == "openai"}
VLLM_TYPES = {n for n, t in MODEL_TYPES.items() if t.backend == "vllm"}


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


def generation_params(cfg: Any, *, max_out_len: int | None = None, stop: Any = None,
                      generation_kwargs: Mapping[str, Any] | None = None) -> GenerationParams:
    """Decoding settings from a model config (``max_out_len``, ``generation_kwargs``, ``stop_words``...).

    ``generation_kwargs`` from the inferencer (``SCInferencer``'s sampling settings) override the model's,
    as the reference passes them last. TurboMind's ``gen_config`` counts as the model's generation kwargs.
    """
    gk: dict[str, Any] = {}
    for key, src in (("gen_config", cfg_get(cfg, "gen_config")), ("generation_kwargs", cfg_get(cfg, "generation_kwargs")),
                     ("inferencer.generation_kwargs", generation_kwargs)):
        if src is None:
            continue
        if not isinstance(src, Mapping):
            raise ConfigError(f"{key} must be a dict", field=key, value=src)
        gk.update(src)
    temperature = _number(gk.pop("temperature", cfg_get(cfg, "temperature", 0.0)) or 0.0, "temperature")
    if gk.pop("do_sample", None) is False:
        temperature = 0.0
    top_p = gk.pop("top_p", None)
    if top_p is not None:
        top_p = _number(top_p, "generation_kwargs.top_p")
    seed = gk.pop("seed", cfg_get(cfg, "seed"))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError("seed must be a whole number", field="generation_kwargs.seed", value=seed)
    stops: list[Any] = []
    for key, src in (("inferencer.stopping_criteria", stop), ("stop_words", cfg_get(cfg, "stop_words")),
                     ("generation_kwargs.stop", gk.pop("stop", None))):
        if src is None:
            continue
        if isinstance(src, str):
            src = [src]
        if not isinstance(src, (list, tuple)):
            raise ConfigError(f"{key} must be a list of strings", field=key, value=src)
        stops += list(src)
    stops = [s for s in stops if isinstance(s, str) and s]
    new_tokens = gk.pop("max_new_tokens", None)
    extra = {k: v for k, v in gk.items() if k in ("top_k", "repetition_penalty", "min_p")}
    out = max_out_len or cfg_get(cfg, "max_out_len") or new_tokens or 512
    if isinstance(out, bool) or not isinstance(out, int) or out < 1:
        raise ConfigError("max_out_len must be a positive whole number", field="max_out_len", value=out)
    return GenerationParams(max_out_len=out, temperature=temperature, top_p=top_p,
                            stop=tuple(dict.fromkeys(stops)), seed=seed, extra=extra)


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{field} must be a number", field=field, value=value)
    return float(value)


LOCAL_WHOLE_NUMBERS = {"max_batch_tokens": "padded token positions one batch may hold, e.g. 8192",
                       "num_threads": "torch threads, e.g. 4 (leave it out to use the CPUs this process may use)"}


def _positive(cfg: Any, key: str, *, file: str | None = None, where: str = "models[]") -> int | None:
    """An optional whole-number setting of a local model (``max_batch_tokens``, ``num_threads``)."""
    value = cfg_get(cfg, key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        if file is not None:
            from promptweave.config.field_line import located

            file = located(file, key, value)
        raise ConfigError(f"{key} must be a positive whole number", file=file, field=f"{where}.{key}", value=value,
                          expected=LOCAL_WHOLE_NUMBERS[key])
    return value


def check_local_settings(cfg: Any, *, file: str | None = None, where: str = "models[]") -> None:
    """A local transformers model's whole-number settings, checked where the other model fields are (planning:
    ``lint``, ``run --dry-run`` and ``run`` alike), so a bad one is refused before any model is built; the error
    names the config file and, where it can be found again, the line."""
    try:
        backend = resolve_model_type(cfg).backend
    except PromptweaveError:
        return  # planning reports a bad model type in its own words
    if backend == "hf":
        for key in LOCAL_WHOLE_NUMBERS:
            _positive(cfg, key, file=file, where=where)


def _api_url(cfg: Any) -> Any:
    url = cfg_get(cfg, "openai_api_base") or cfg_get(cfg, "base_url") or cfg_get(cfg, "url")
    if isinstance(url, (list, tuple)):
        url = url[0] if url else None
    if not url and cfg_get(cfg, "host_ip"):  # AISBench service models name host and port
        url = f"http://{cfg_get(cfg, 'host_ip')}:{cfg_get(cfg, 'host_port') or 8080}/v1"
    return url


def api_key(cfg: Any, url: Any, where: str = "models[]") -> str | None:
    """The key sent to an API model: a literal ``key`` from the config, or an environment variable the *user*
    named with ``--allow-env``, for this destination.

    ``key='ENV'`` and ``api_key_env='NAME'`` ask for a variable (``OPENAI_API_KEY`` by default), which goes
    through the env rule as a credential: refused unless the command line allowed that exact name, for a host
    the grant covers. A config that names no key sends none, unless the user allowed ``OPENAI_API_KEY``
    (OpenCompass's default).
    """
    from promptweave.sandbox.env import read_env

    asked = key_variable(cfg)
    if isinstance(asked, str):
        return asked  # written in the config itself: no environment read
    if asked is None:
        return None  # nothing asked for, nothing allowed: no key (local servers need none)
    var, field = asked
    return read_env(var, credential=True, purpose=f"the API key sent to {url}", field=f"{where}.{field}",
                    destination=url)


def key_variable(cfg: Any) -> str | tuple[str, str] | None:
    """What a model's key is: a literal key (str), an environment variable with the field that asks for it
    (``(name, 'key' | 'api_key_env')``), or None (no key)."""
    from promptweave.sandbox.env import current_policy

    key = cfg_get(cfg, "api_key", cfg_get(cfg, "key"))
    named = cfg_get(cfg, "api_key_env")
    if key and key != "ENV" and not named:
        return str(key)
    var = named or "OPENAI_API_KEY"
    if not (key == "ENV" or named) and not current_policy().allows(var):
        return None
    return var, "api_key_env" if named else "key"


def _judge_cfgs(config: Any, dataset_ids: Any) -> list[tuple[str, Any]]:
    """(where, model config) of every LLM judge the selected datasets may call."""
    variables = getattr(config, "variables", {}) or {}
    out = [(f"judge_models[{k}]", m) for k, m in enumerate(variables.get("judge_models") or [])
           if isinstance(m, Mapping)]
    stack = [(f"datasets[{i}].eval_cfg", config.datasets[i].get("eval_cfg")) for i in dataset_ids or ()]
    while stack:
        where, node = stack.pop()
        if isinstance(node, Mapping):
            for k, v in node.items():
                if k == "judge_cfg" and isinstance(v, Mapping) and v:
                    out.append((f"{where}.judge_cfg", v))
                stack.append((f"{where}.{k}", v))
        elif isinstance(node, list):
            stack.extend((f"{where}[{n}]", v) for n, v in enumerate(node))
    return out


def key_destinations(config: Any, model_ids: Any, dataset_ids: Any = ()) -> dict[str, list[tuple[str, Any]]]:
    """Each environment variable the selected models and judges would send as an API key, with the
    (field, URL) of every destination, in config order."""
    targets = [(f"models[{j}]", config.models[j]) for j in model_ids] + _judge_cfgs(config, dataset_ids)
    out: dict[str, list[tuple[str, Any]]] = {}
    for where, mcfg in targets:
        try:
            backend = resolve_model_type(mcfg).backend
        except PromptweaveError:
            continue  # planning reports a bad model type in its own words
        if backend != "openai":
            continue
        asked = key_variable(mcfg)
        if isinstance(asked, tuple):
            out.setdefault(asked[0], []).append((f"{where}.{asked[1]}", _api_url(mcfg)))
    return out


def describe_key_destinations(config: Any, model_ids: Any, dataset_ids: Any = ()) -> list[str]:
    """One line per variable sent as an API key, naming every host it goes to (the dry run's view)."""
    from promptweave.sandbox.env import origin

    lines = []
    for var, dests in key_destinations(config, model_ids, dataset_ids).items():
        hosts = dict.fromkeys(origin(url) for _, url in dests)
        lines.append(f"env {var} sent as an API key to: " + ", ".join(
            f"{h} ({', '.join(w for w, u in dests if origin(u) == h)})" for h in hosts))
    return lines


def check_api_keys(config: Any, model_ids: Any, dataset_ids: Any = (), *, bind: bool = True) -> None:
    """Apply the env rule to the API key of each selected model, and of the judges the selected datasets may
    call, before anything is planned or sent: ``lint``, ``run --dry-run`` and ``run`` refuse the same config the
    same way (and the dry run lists the reads and every destination).

    Per variable, over the whole config: it must be allowed (the refusal names every host it would go to); a
    bare ``--allow-env NAME`` covers one host, ``NAME@host`` entries must cover each destination; the config
    must not also read it as a plain value. A bare grant is then bound to the checked host (``bind``; ``lint``
    checks several configs under one command line and binds nothing)."""
    from promptweave.errors import SecretAsTextError, SecretDestinationError, SecretRefusedError
    from promptweave.sandbox.env import current_policy, host_matches, narrow_policy, origin

    file = str(config.path)
    policy = current_policy()
    plain = getattr(config, "env_reads", {}) or {}
    for var, dests in key_destinations(config, model_ids, dataset_ids).items():
        hosts = list(dict.fromkeys(origin(url) for _, url in dests))
        fields = ", ".join(w for w, _ in dests)
        first = dests[0][0]
        per_host = " ".join(f"--allow-env {var}@{h}" for h in hosts)
        if policy.trusted:
            continue
        if not policy.allows(var):
            raise SecretRefusedError(
                f"the config asks to send the environment variable {var!r} as the API key to "
                f"{', '.join(hosts)} ({fields}); a config does not choose which of your secrets leave this "
                "machine", file=file, field=first,
                expected=(f"--allow-env {var}" if len(hosts) == 1 else per_host)
                + " on the command line if you mean to send it there")
        if var in plain:
            raise SecretAsTextError(
                f"the config reads the environment variable {var!r} as a plain value and also sends it as an "
                f"API key ({fields}); a value granted as a key is never readable by the config (it could be put "
                "in a prompt)", file=file, field=first,
                expected=f"a config that does not read {var} itself (os.environ.get / os.getenv)")
        granted = policy.destinations(var)
        if granted is None:
            if len(hosts) > 1:
                raise SecretDestinationError(
                    f"the config sends the environment variable {var!r} as an API key to {len(hosts)} hosts: "
                    f"{', '.join(hosts)} ({fields}); --allow-env {var} grants it to one host only", file=file,
                    field=first, expected=f"{per_host} on the command line if you mean to send it to each")
            if bind:
                narrow_policy(var, hosts)
        else:
            bad = [h for h in hosts if not any(host_matches(g, h) for g in granted)]
            if bad:
                where = ", ".join(w for w, u in dests if origin(u) in bad)
                raise SecretDestinationError(
                    f"the config sends the environment variable {var!r} as an API key to {', '.join(bad)} "
                    f"({where}), which --allow-env {var}@{'/'.join(granted)} does not name; all its "
                    f"destinations: {', '.join(hosts)}", file=file, field=first,
                    expected=" ".join(f"--allow-env {var}@{h}" for h in bad)
                    + " on the command line if you mean to send it there")
    targets = [(f"models[{j}]", config.models[j]) for j in model_ids] + _judge_cfgs(config, dataset_ids)
    for where, mcfg in targets:  # the reads themselves (recorded for the dry run), under the bound policy
        try:
            backend = resolve_model_type(mcfg).backend
        except PromptweaveError:
            continue
        try:
            if backend == "openai":
                api_key(mcfg, _api_url(mcfg), where=where)
        except PromptweaveError as exc:
            raise (exc.at(file=file) if exc.file is None else exc) from None


def build_model(cfg: Any, *, retry_overrides: Mapping[str, Any] | None = None) -> Any:
    """A model backend from its config (type resolved by ``compat.models``); typed errors name the bad field."""
    mt = resolve_model_type(cfg)
    name = model_name(cfg)
    if cfg_get(cfg, "peft_path"):
        raise UnsupportedError("LoRA / PEFT adapters are not loaded; merge the adapter into the checkpoint and "
                               "point path at it", field="models[].peft_path", value=cfg_get(cfg, "peft_path"))
    if mt.backend == "openai" and _aisbench_service(cfg):
        return _build_aisbench_service(cfg, name, retry_overrides)
    if mt.backend == "openai":
        from promptweave.models.openai_compat import OpenAICompatModel

        url = _api_url(cfg)
        if not url:
            raise ConfigError("an API model needs base_url (or openai_api_base)", field="models[].base_url",
                              value=name)
        key = api_key(cfg, url)
        qps = cfg_get(cfg, "query_per_second")
        kw: dict[str, Any] = dict(
            name=name,
            concurrency=int(cfg_get(cfg, "concurrency") or cfg_get(cfg, "max_workers") or cfg_get(cfg, "batch_size")
                            or 16),
            rpm=cfg_get(cfg, "rpm") or (float(qps) * 60 if qps else None),
            max_retries=int(cfg_get(cfg, "retry", cfg_get(cfg, "max_retries", 6))),
            timeout=float(cfg_get(cfg, "timeout", 120.0)),
            **reply_limits(cfg),
            extra_body=cfg_get(cfg, "extra_body"),
            revision=cfg_get(cfg, "revision"),
        )
        # a text ("lm") model behind an OpenAI server gets /completions; a chat ("api") model gets chat
        kind = cfg_get(cfg, "kind") or mt.kind
        endpoint = cfg_get(cfg, "endpoint") or ("completions" if kind == "lm" else "chat")
        kw["endpoint"] = "completions" if endpoint in ("completion", "completions") else endpoint
        if cfg_get(cfg, "backoff_base") is not None:
            kw["backoff_base"] = float(cfg_get(cfg, "backoff_base"))
        kw.update(retry_overrides or {})
        return OpenAICompatModel(str(url), str(cfg_get(cfg, "model") or cfg_get(cfg, "path") or name),
                                 api_key=key, **kw)
    if mt.backend == "hf":
        from promptweave.models.hf import HFModel

        path = cfg_get(cfg, "path")
        if not path:
            raise ConfigError("a transformers model needs a path", field="models[].path", value=name)
        mk = dict(cfg_get(cfg, "model_kwargs") or {})
        mk.pop("trust_remote_code", None)  # never run checkpoint code
        dtype = str(mk.pop("torch_dtype", mk.pop("dtype", cfg_get(cfg, "dtype", "auto")))).replace("torch.", "")
        device = mk.pop("device_map", cfg_get(cfg, "device", "auto"))
        if not isinstance(device, str) or device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
            device = "auto"
        tk = dict(cfg_get(cfg, "tokenizer_kwargs") or {})
        tk.pop("trust_remote_code", None)
        return HFModel(str(path), name=name, tokenizer_path=cfg_get(cfg, "tokenizer_path"),
                       revision=cfg_get(cfg, "revision"), device=device, dtype=dtype,
                       batch_size=int(cfg_get(cfg, "batch_size") or 8), max_seq_len=cfg_get(cfg, "max_seq_len"),
                       eos_token_id=meta_eos(cfg), model_kwargs=mk, tokenizer_kwargs=tk,
                       max_batch_tokens=_positive(cfg, "max_batch_tokens"), num_threads=_positive(cfg, "num_threads"))
    from promptweave.models.vllm_backend import VLLMModel

    path = cfg_get(cfg, "path")
    if not path:
        raise ConfigError("a vLLM model needs a path", field="models[].path", value=name)
    ek = dict(cfg_get(cfg, "model_kwargs") or {})
    engine = dict(cfg_get(cfg, "engine_config") or {})  # TurboMind's names, translated
    if "tp" in engine:
        ek.setdefault("tensor_parallel_size", engine["tp"])
    max_seq = cfg_get(cfg, "max_seq_len") or engine.get("session_len")
    batch = cfg_get(cfg, "batch_size") or engine.get("max_batch_size") or 256
    return VLLMModel(str(path), name=name, max_seq_len=max_seq, eos_token_id=meta_eos(cfg), engine_kwargs=ek,
                     batch_size=int(batch))


REPLY_LIMIT_KEYS = ("deadline", "max_reply_bytes", "max_event_bytes", "max_json_depth")


def reply_limits(cfg: Any) -> dict[str, Any]:
    """The reply bounds a model config sets (models/reply_limits.py), checked: a bad value names its field."""
    from promptweave.models.reply_limits import ReplyLimits

    given = {k: cfg_get(cfg, k) for k in REPLY_LIMIT_KEYS if cfg_get(cfg, k) is not None}
    ReplyLimits(timeout=float(cfg_get(cfg, "timeout", 120.0)), **given)  # raises a typed error naming the field
    return given


def _aisbench_service(cfg: Any) -> bool:
    from promptweave.compat.service_types import is_service_type

    return is_service_type(type_name(cfg))


def _build_aisbench_service(cfg: Any, name: str, retry_overrides: Mapping[str, Any] | None) -> Any:
    """An AISBench service class: its URL rules and request bodies (models/aisbench_service.py)."""
    from promptweave.models.aisbench_service import AISBenchServiceModel

    fields = ("url", "host_ip", "host_port", "enable_ssl", "model", "api_key", "stream", "generation_kwargs")
    view = {k: cfg_get(cfg, k) for k in fields if cfg_get(cfg, k) is not None}
    kw: dict[str, Any] = dict(
        concurrency=int(cfg_get(cfg, "concurrency") or cfg_get(cfg, "batch_size") or 16),
        rpm=cfg_get(cfg, "rpm"),
        # AISBench's ``retry`` counts every attempt (its loop sends ``retry`` requests at most)
        max_retries=max(0, int(cfg_get(cfg, "retry", 2)) - 1),
        timeout=float(cfg_get(cfg, "timeout", 120.0)),
        **reply_limits(cfg),
        revision=cfg_get(cfg, "revision"),
        request_rate=_request_rate(cfg),
        traffic=traffic_settings(cfg_get(cfg, "traffic_cfg")),
    )
    if cfg_get(cfg, "backoff_base") is not None:
        kw["backoff_base"] = float(cfg_get(cfg, "backoff_base"))
    kw.update(retry_overrides or {})
    return AISBenchServiceModel(view, type_name=type_name(cfg), name=name, **kw)


def _request_rate(cfg: Any) -> float | None:
    """AISBench's ``request_rate`` (requests started per second; 0 or absent: not paced), checked."""
    rate = cfg_get(cfg, "request_rate")
    if rate is None:
        return None
    if not isinstance(rate, (int, float)) or isinstance(rate, bool) or rate < 0:
        raise ConfigError("request_rate must be a number >= 0 (requests started per second; 0: not paced)",
                          field="models[].request_rate", value=rate)
    return float(rate) or None


def batching_note(cfg: Any, abbr: str) -> str | None:
    """How an in-process model's batches are formed, as the plan says it; None for an HTTP model."""
    mt = MODEL_TYPES.get(type_name(cfg))
    if mt is None or mt.backend == "openai":
        return None
    if mt.backend == "vllm":
        return f"batches: {abbr}: each run batch's requests in one vLLM call (vLLM schedules them; prefix caching on)"
    from promptweave.models.length_batches import batching_note as note

    return f"batches: {abbr}: {note(int(cfg_get(cfg, 'batch_size') or 8), cfg_get(cfg, 'max_batch_tokens'))}"


def token_counter_path(cfg: Any) -> Any:
    """Where a model's tokenizer is for counting: local models use ``tokenizer_path`` or ``path``; an HTTP model
    only when its config names a ``tokenizer_path`` (the served model's tokenizer, available locally)."""
    kind = type_name(cfg)
    if kind in OPENAI_TYPES:
        return cfg_get(cfg, "tokenizer_path")
    if kind in HF_TYPES or kind in VLLM_TYPES:
        return cfg_get(cfg, "tokenizer_path") or cfg_get(cfg, "path")
    return None


def load_token_counter(cfg: Any) -> Any:
    """A ``count(rendered) -> int`` with the model's own tokenizer (loaded alone, no weights), or None
    (see :func:`token_counter_path` for which tokenizer).

    A folder with ``tokenizer.json`` is read by ``tokenizers`` alone (``light_tokens``: the counts transformers
    gives, without importing it or torch), so planning a run that fits in-context examples, its dry run and its
    lint count alike and import no torch; otherwise transformers' tokenizer."""
    path = token_counter_path(cfg)
    if not path:
        return None
    light = _light_counter(path, cfg_get(cfg, "tokenizer_kwargs"))
    if light is not None:
        return light
    try:
        from transformers import AutoTokenizer
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError("counting tokens for max_seq_len needs transformers: pip install 'promptweave[hf]'",
                          field="models[].tokenizer_path", value=path) from exc
    from pathlib import Path

    from promptweave.models.hf import token_counter

    if Path(str(path)).expanduser().is_dir():  # a local tokenizer folder is input: no file may link out of it
        from promptweave.render.chat_template import check_tokenizer_folder

        try:
            check_tokenizer_folder(path)
        except PromptweaveError as exc:
            raise ConfigError(exc.message, file=exc.file, field="models[].tokenizer_path",
                              expected="the tokenizer's own files, copied into the folder") from None
    try:
        tok = AutoTokenizer.from_pretrained(str(path), revision=cfg_get(cfg, "revision"),
                                            **dict(cfg_get(cfg, "tokenizer_kwargs") or {}))
    except OSError as exc:
        raise ConfigError(f"cannot load the tokenizer to fit prompts into max_seq_len: {exc}",
                          field="models[].tokenizer_path", value=str(path)) from None
    return token_counter(tok)


def _light_counter(path: Any, tokenizer_kwargs: Any) -> Any:
    from promptweave.models.light_tokens import light_token_counter

    try:
        return light_token_counter(path, tokenizer_kwargs)
    except PromptweaveError:
        return None  # a refused folder: transformers' path below says why, in its own words
    except Exception:  # noqa: BLE001 - a tokenizer.json ``tokenizers`` cannot read: let transformers try it
        return None
