"""Render a filled prompt to the messages a chat API model receives."""
from __future__ import annotations

import warnings
from typing import Any

from promptweave.errors import MetaTemplateError, PromptweaveWarning
from promptweave.prompt.dialogue import Dialogue, Turn
from promptweave.render.meta import MetaTemplate
from promptweave.render.text import join_plain
from promptweave.render.walk import Merged, walk

OPENAI_ROLES = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system"}


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise MetaTemplateError("token ids in begin/end need a text model; chat models take strings", value=value)


def render_chat(prompt: str | Dialogue, meta: MetaTemplate | None, mode: str = "gen", *,
                dialect: str = "promptweave") -> Any:
    """Messages ``[{"role": api_role, "prompt": ...}]`` for an API model (a str prompt passes through).

    Consecutive messages of one role are merged with a newline (text with
    content parts: into one parts list); a meta ``begin`` is put first as given.
    A turn with content parts gets the parts list as its prompt (role begin/end
    do not apply). Without a meta template the items are joined as text; see
    :func:`_plain_with_parts` for prompts with content parts.
    """
    if isinstance(prompt, str):
        return prompt
    if meta is None:
        if any(type(i) is Turn and i.parts is not None for i in prompt.items):
            return _plain_with_parts(prompt, dialect)
        return join_plain(prompt.items)
    msgs: list[dict[str, Any]] = []

    def emit(m: Merged) -> None:
        if m.parts is not None:
            msgs.append({"role": m.api_role, "prompt": [p.to_json() for p in m.parts]})
        else:
            msgs.append({"role": m.api_role, "prompt": _text(m.begin) + (m.prompt or "") + _text(m.end)})

    def on_string(s: str) -> None:
        if s.strip():
            warnings.warn(f"a plain string item is dropped for API models (no role): {s[:40]!r}",
                          PromptweaveWarning, stacklevel=4)

    def on_round_string(spec: str) -> None:
        raise MetaTemplateError("a chat model's meta template round cannot hold plain strings",
                                field="meta_template.round", value=spec)

    def on_turn(m: Merged, for_gen: bool) -> bool:
        if for_gen and m.generate:
            return False
        emit(m)
        return True

    walk(prompt.items, meta, mode, on_string=on_string, on_round_string=on_round_string, on_turn=on_turn,
         use_fallback=True)
    merged: list[dict[str, Any]] = []
    for msg in msgs:
        if merged and merged[-1]["role"] == msg["role"]:
            prev = merged[-1]
            if isinstance(prev["prompt"], str) and isinstance(msg["prompt"], str):
                prev["prompt"] = prev["prompt"] + "\n" + msg["prompt"]
            else:
                prev["prompt"] = _as_parts(prev["prompt"]) + _as_parts(msg["prompt"])
        else:
            merged.append(dict(msg))
    if meta.begin:
        merged.insert(0, meta.begin)
    return merged


def _plain_with_parts(prompt: Dialogue, dialect: str) -> Any:
    """An API model without a meta template, for a prompt with content parts.

    By default: one parts list in prompt order (text items become text parts).
    ``dialect="aisbench"``: the joined text if there is any (the parts are then
    lost, with a warning), else all parts concatenated, as AISBench does.
    """
    if dialect == "aisbench":
        text = join_plain(prompt.items)
        parts = [p.to_json() for i in prompt.items if type(i) is Turn and i.parts for p in i.parts]
        if text:
            if parts:
                warnings.warn(f"{len(parts)} content part(s) dropped: AISBench sends only the text when a prompt "
                              "without a meta template has any", PromptweaveWarning, stacklevel=4)
            return text
        return parts
    out: list[dict[str, Any]] = []
    for it in prompt.items:
        t = type(it)
        if t is str:
            if it:
                out.append({"type": "text", "text": it})
        elif t is Turn:
            if it.prompt:
                out.append({"type": "text", "text": it.prompt})
            if it.parts:
                out.extend(p.to_json() for p in it.parts)
    return out


def _as_parts(p: Any) -> list:
    return list(p) if isinstance(p, list) else [{"type": "text", "text": p}]


def to_openai_messages(rendered: Any, *, keep_extra_keys: bool = False) -> list[dict[str, Any]]:
    """OpenAI chat ``messages`` for a rendered API prompt.

    ``keep_extra_keys`` passes any other keys of a message through (AISBench
    does this for a meta template's ``begin`` dict); off by default so a real
    server only sees ``role`` and ``content``.
    """
    if isinstance(rendered, str):
        return [{"role": "user", "content": rendered}]
    out = []
    for m in rendered:
        role = m.get("role")
        msg = {k: v for k, v in m.items() if k not in ("role", "prompt")} if keep_extra_keys else {}
        msg["role"] = OPENAI_ROLES.get(role, str(role).lower())
        msg["content"] = m.get("prompt", "")
        out.append(msg)
    return out
