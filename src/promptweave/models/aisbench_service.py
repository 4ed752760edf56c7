"""AISBench's service model classes (``VLLMCustomAPIChat``, ``VLLMCustomAPI`` and their streaming / multi-turn
variants), sending the request bodies AISBench sends.

What the reference does, and so what is done here:

- A chat class without a ``meta_template`` uses ``round = HUMAN, BOT(generate)`` with a reserved ``SYSTEM`` role
  (:data:`DEFAULT_CHAT_META`), so a template's ``round`` — in-template shots, a multi-turn conversation's
  history — reaches the server as separate user / assistant messages (the renderer does that with this meta).
- Each rendered message becomes ``{"content": prompt, "role": user|assistant|system|tool}``; any other key a
  message carries (a meta ``begin`` dict's) is sent as it is. A content-parts prompt is the content list.
- The body is ``{"stream", "messages" | "prompt", **generation_kwargs, "max_tokens", "model"}``: the
  ``generation_kwargs`` of the model config are sent verbatim (``temperature=0.01, ignore_eos=False`` in the
  shipped configs) and nothing else is added (no stop words: AISBench does not send the inferencer's
  ``stopping_criteria``).
- The server address is ``url`` (a scheme added when missing) or ``http(s)://host_ip:host_port/``, joined with
  ``v1/chat/completions`` / ``v1/completions``; an empty ``model`` is the first id of ``GET v1/models``.

Streaming (``stream=True`` or a ``...Stream`` class) is not used: the body says ``"stream": false`` and the reply
is read whole, so the text scored is the same; it is the one field in which such a body differs from AISBench's
(said once in the plan's model notes).
"""
from __future__ import annotations

import ipaddress
import json
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any, Sequence

from promptweave.errors import ConfigError, ModelError
from promptweave.models.base import GenerationParams, Message
from promptweave.models.openai_compat import OpenAICompatModel

# what AISBench's chat classes assume when a config gives no meta template
DEFAULT_CHAT_META: dict[str, Any] = {
    "round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}],
    "reserved_roles": [{"role": "SYSTEM", "api_role": "SYSTEM"}],
}

ROLE_MAP = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system", "TOOL": "tool"}

# type name -> (endpoint, stream forced on): the classes AISBench registers for OpenAI-protocol servers
SERVICE_TYPES: dict[str, tuple[str, bool | None]] = {
    "VLLMCustomAPIChat": ("chat", None),
    "VLLMCustomAPIChatStream": ("chat", True),
    "VllmMultiturnAPIChatStream": ("chat", True),
    "VLLMFunctionCallAPIChat": ("chat", False),
    "VLLMCustomAPI": ("completions", None),
    "VLLMCustomAPIStream": ("completions", True),
}


def is_service_type(type_name: str) -> bool:
    return type_name in SERVICE_TYPES


def default_meta(type_name: str) -> dict[str, Any] | None:
    """The meta template an AISBench chat class uses when its config names none (completions: none)."""
    kind = SERVICE_TYPES.get(type_name)
    return DEFAULT_CHAT_META if kind is not None and kind[0] == "chat" else None


def base_url(cfg: Mapping[str, Any]) -> str:
    """The server root as AISBench forms it (always ending in ``/``)."""
    scheme = "https" if cfg.get("enable_ssl") else "http"
    url = cfg.get("url")
    url = url.strip() if isinstance(url, str) else ""
    if url:
        if not url.startswith(("http://", "https://")):
            url = f"{scheme}://{url}"
        parsed = urllib.parse.urlparse(url)
        if parsed.path and not parsed.path.endswith("/"):
            url = urllib.parse.urlunparse(parsed._replace(path=parsed.path + "/"))
        return url
    host = str(cfg.get("host_ip") or "localhost")
    try:
        if isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address):
            host = f"[{host}]"
    except ValueError:
        pass
    return f"{scheme}://{host}:{cfg.get('host_port') or 8080}/"


def to_messages(rendered: Any) -> list[dict[str, Any]]:
    """AISBench's message list for a rendered chat prompt: a bare string is one user message."""
    if isinstance(rendered, str):
        return [{"role": "user", "content": rendered}]
    out = []
    for item in rendered:
        if "content" in item and "prompt" not in item:  # already OpenAI-shaped (agent / tool turns)
            out.append(dict(item))
            continue
        msg: dict[str, Any] = {"content": item.get("prompt", "")}
        role = item.get("role", "")
        msg["role"] = ROLE_MAP.get(role, role)
        msg.update({k: v for k, v in item.items() if k not in ("role", "prompt")})
        out.append(msg)
    return out


class AISBenchServiceModel(OpenAICompatModel):
    """An AISBench service model: the reference's URL, message list and request body over this client."""

    def __init__(self, cfg: Mapping[str, Any], *, type_name: str, name: str, **kw: Any) -> None:
        endpoint, forced = SERVICE_TYPES[type_name]
        gk = cfg.get("generation_kwargs")
        if gk is not None and not isinstance(gk, Mapping):
            raise ConfigError("generation_kwargs must be a dict", field="models[].generation_kwargs", value=gk)
        self.generation_kwargs = dict(gk or {})
        # streaming is not used (module docstring): the configured value is kept for the plan's notes only
        self.configured_stream = bool(cfg.get("stream", False)) if forced is None else forced
        self.stream = False
        self.service_root = base_url(cfg)
        api_root = urllib.parse.urljoin(self.service_root, "v1")
        api_key = cfg.get("api_key") or None
        super().__init__(api_root, str(cfg.get("model") or ""), api_key=api_key, name=name, endpoint=endpoint,
                         **kw)
        self.type_name = type_name

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident.update(wire="aisbench", type=self.type_name, generation_kwargs=self.generation_kwargs)
        return ident

    # -- the served model's name, as AISBench finds it ----------------------------
    def _served_model(self) -> str:
        if self.model:
            return self.model
        url = urllib.parse.urljoin(self.service_root, "v1/models")
        req = urllib.request.Request(url, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:  # noqa: S310 - the configured server
                data = json.loads(resp.read())
            self.model = str(data["data"][0]["id"])
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"model is empty and {url} did not name the served model ({exc}); set model='...'",
                             field="models[].model", value="") from None
        return self.model

    def run_batch(self, kind: str, items: Sequence[Any], params: GenerationParams | None = None,
                  **kw: Any) -> list[Any]:
        if items:
            self._served_model()
        return super().run_batch(kind, items, params, **kw)

    # -- request bodies ------------------------------------------------------------
    def _body(self, params: GenerationParams) -> dict[str, Any]:
        extra = dict(self.generation_kwargs)
        extra["max_tokens"] = params.max_out_len
        extra["model"] = self.model
        return extra

    def chat_request(self, messages: Sequence[Message], params: GenerationParams) -> tuple[str, dict]:
        body: dict[str, Any] = {"stream": self.stream, "messages": to_messages(messages)}
        return "/chat/completions", body | self._body(params)

    def completion_request(self, prompt: str, params: GenerationParams) -> tuple[str, dict]:
        return "/completions", {"prompt": prompt, "stream": self.stream} | self._body(params)
