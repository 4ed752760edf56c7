"""AISBench's service model classes (``VLLMCustomAPIChat``, ``VLLMCustomAPI`` and their streaming / multi-turn
variants), sending the request bodies AISBench sends.

What the reference does, and so what is done here:

- A chat class without a ``meta_template`` uses ``round = HUMAN, BOT(generate)`` with a reserved ``SYSTEM`` role
  (:data:`~promptweave.compat.service_types.DEFAULT_CHAT_META`), so a template's ``round`` — in-template shots, a multi-turn conversation's
  history — reaches the server as separate user / assistant messages (the renderer does that with this meta).
- Each rendered message becomes ``{"content": prompt, "role": user|assistant|system|tool}``; any other key a
  message carries (a meta ``begin`` dict's) is sent as it is. A content-parts prompt is the content list.
- The body is ``{"stream", "messages" | "prompt", **generation_kwargs, "max_tokens", "model"}``: the
  ``generation_kwargs`` of the model config are sent verbatim (``temperature=0.01, ignore_eos=False`` in the
  shipped configs) and nothing else is added (no stop words: AISBench does not send the inferencer's
  ``stopping_criteria``).
- The server address is ``url`` (a scheme added when missing) or ``http(s)://host_ip:host_port/``, joined with
  ``v1/chat/completions`` / ``v1/completions``; an empty ``model`` is the first id of ``GET v1/models``.
- Streaming (``stream=True``, or a ``...Stream`` class, which forces it) is sent as AISBench sends it:
  ``"stream": true`` with ``"stream_options": {"include_usage": true}`` (for completions set after
  ``generation_kwargs``, for chat before them, as the reference orders it), and the reply is read as a
  server-sent event stream (``models/sse.py``): the text is the ``delta.content`` (chat) or ``text``
  (completions) of every event, joined.
- A chat reply's text is, as AISBench's ``get_prediction`` makes it, ``reasoning + "</think>" + content`` when
  the server sends ``reasoning_content`` (or ``reasoning``) beside the content (the reasoning alone when there is
  no content), streamed or not; the shipped configs' ``extract_non_reasoning_content`` then keeps the answer.
- Where this reads more than AISBench does (a server that answers a stream request with one JSON reply; an
  event's ``event:`` / ``id:`` lines), the reply is read rather than failed.
"""
from __future__ import annotations

import ipaddress
import json
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any, Sequence

from promptweave.compat.service_types import SERVICE_TYPES
from promptweave.errors import ConfigError, ModelError
from promptweave.models.base import GenerationParams, Message
from promptweave.models.openai_compat import OpenAICompatModel, TransportError, served_models
from promptweave.models.sse import json_events

ROLE_MAP = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system", "TOOL": "tool"}


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
        self.stream = bool(cfg.get("stream", False)) if forced is None else forced
        self.service_root = base_url(cfg)
        api_root = urllib.parse.urljoin(self.service_root, "v1")
        api_key = cfg.get("api_key") or None
        super().__init__(api_root, str(cfg.get("model") or ""), api_key=api_key, name=name, endpoint=endpoint,
                         **kw)
        self.type_name = type_name

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident.update(wire="aisbench", type=self.type_name, generation_kwargs=self.generation_kwargs)
        if self.stream:  # (only when on: the keys of answers cached from non-streamed runs stay as they were)
            ident["stream"] = True
        return ident

    # -- the served model's name, as AISBench finds it ----------------------------
    def _served_model(self) -> str:
        if self.model:
            return self.model
        url = urllib.parse.urljoin(self.service_root, "v1/models")
        try:
            data = served_models(url, self.headers, self.limits)
            self.model = str(data["data"][0]["id"])
        except (TransportError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"model is empty and {url} did not name the served model ({exc}); set model='...'",
                             field="models[].model", value="") from None
        return self.model

    def served_model(self) -> str:
        return self._served_model()

    def stream_request(self, item: Any, params: GenerationParams) -> tuple[str, dict]:
        """The body accuracy mode sends, with streaming forced on as a ``...Stream`` class sends it."""
        was, self.stream = self.stream, True
        try:
            if isinstance(item, str) and self.endpoint == "completions":
                return self.completion_request(item, params)
            return self.chat_request(item, params)
        finally:
            self.stream = was

    def run_batch(self, kind: str, items: Sequence[Any], params: GenerationParams | None = None,
                  on_result: Callable[[int, Any], None] | None = None,
                  on_error: Callable[[int, ModelError], None] | None = None,
                  on_results: Callable[[list[tuple[int, Any]]], None] | None = None) -> list[Any]:
        if items:
            self._served_model()
        return super().run_batch(kind, items, params, on_result=on_result, on_error=on_error, on_results=on_results)

    # -- request bodies ------------------------------------------------------------
    def _body(self, params: GenerationParams) -> dict[str, Any]:
        extra = dict(self.generation_kwargs)
        extra["max_tokens"] = params.max_out_len
        extra["model"] = self.model
        return extra

    def chat_request(self, messages: Sequence[Message], params: GenerationParams) -> tuple[str, dict]:
        body: dict[str, Any] = {"stream": self.stream, "messages": to_messages(messages)}
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        return "/chat/completions", body | self._body(params)

    def completion_request(self, prompt: str, params: GenerationParams) -> tuple[str, dict]:
        body = {"prompt": prompt, "stream": self.stream} | self._body(params)
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        return "/completions", body

    # -- replies ---------------------------------------------------------------------
    def decode_reply(self, resp: Any, path: str, body: dict) -> Any:
        """The reply in the shape the parsers read: a streamed one put back together, a chat reply's reasoning
        joined to its content as AISBench's prediction is."""
        chat = path.endswith("/chat/completions")
        if body.get("stream") is True and not resp.content.lstrip().startswith(b"{"):
            return stream_reply(json_events(resp.content, self.limits), chat=chat)
        data = resp.json()
        return with_reasoning(data) if chat else data


def prediction(content: str, reasoning: str) -> str:
    """AISBench's prediction from a reply's content and reasoning."""
    if not reasoning:
        return content
    return f"{reasoning}</think>{content}" if content else reasoning


def with_reasoning(data: Any) -> Any:
    """A whole chat reply whose text is AISBench's: every choice's content (and reasoning) joined."""
    try:
        choices = data["choices"]
        msgs = [c["message"] for c in choices]
        content = "".join(m.get("content") or "" for m in msgs)
        reasoning = "".join(m.get("reasoning_content") or m.get("reasoning") or "" for m in msgs)
    except (KeyError, TypeError, AttributeError):
        return data  # malformed: the parser says so (and the request is retried)
    if not reasoning and len(msgs) == 1:
        return data
    if not isinstance(content, str) or not isinstance(reasoning, str):
        return data
    first = dict(choices[0], message=dict(msgs[0], content=prediction(content, reasoning)))
    return dict(data, choices=[first])


def stream_reply(events: list[Any], *, chat: bool) -> dict[str, Any]:
    """The whole reply a streamed one adds up to: chat ``delta`` contents (and reasoning) joined, or the
    completions ``text`` of each event's first choice joined (an event without choices — the usage one — adds
    nothing)."""
    content, reasoning = [], []
    for ev in events:
        choices = ev.get("choices") if isinstance(ev, dict) else None
        if not isinstance(choices, list):
            raise ValueError(f"a stream event without a choices list: {json.dumps(ev)[:120]}")
        if chat:
            for c in choices:
                delta = c.get("delta") if isinstance(c, dict) else None
                if not isinstance(delta, dict):
                    raise ValueError(f"a chat stream event without a delta: {json.dumps(ev)[:120]}")
                content.append(str(delta.get("content") or ""))
                reasoning.append(str(delta.get("reasoning_content") or delta.get("reasoning") or ""))
        elif choices and isinstance(choices[0], dict):
            content.append(str(choices[0].get("text") or ""))
    if chat:
        text = prediction("".join(content), "".join(reasoning))
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
    return {"choices": [{"index": 0, "text": "".join(content)}]}
