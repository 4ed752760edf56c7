"""Render a filled prompt to the messages a chat API model receives."""
from __future__ import annotations

import warnings
from typing import Any

from promptweave.errors import MetaTemplateError, PromptweaveWarning
from promptweave.prompt.dialogue import Dialogue, Turn
from promptweave.render.meta import MetaTemplate
from promptweave.render.text import join_plain
from promptweave.render.walk import Merged, resolve_role, split_rounds, walk

OPENAI_ROLES = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system"}


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise MetaTemplateError("token ids in begin/end need a text model; chat models take strings", value=value)


def render_chat(prompt: str | Dialogue, meta: MetaTemplate | None, mode: str = "gen") -> Any:
    """Messages ``[{"role": api_role, "prompt": ...}]`` for an API model (a str prompt passes through).

    Consecutive messages of one role are merged with a newline; a meta ``begin``
    is put first as given. Without a meta template the items are joined as text.
    """
    if isinstance(prompt, str):
        return prompt
    if meta is None:
        return join_plain(prompt.items)
    msgs: list[dict[str, Any]] = []

    def emit(m: Merged) -> None:
        if m.parts is not None and m.prompt == "":
            msgs.append({"role": m.api_role, "prompt": [p.to_json() for p in m.parts]})
        else:
            msgs.append({"role": m.api_role, "prompt": _text(m.begin) + (m.prompt or "") + _text(m.end)})

    def on_string(s: str) -> None:
        if s.strip():
            warnings.warn(f"a plain string item is dropped for API models (no role): {s[:40]!r}",
                          PromptweaveWarning, stacklevel=4)

    def on_rounds(turns: list[Turn], gen_last: bool) -> bool:
        rounds = split_rounds(turns, meta, use_fallback=True)
        last = len(rounds) - 1
        for r, round_turns in enumerate(rounds):
            for_gen = gen_last and r == last
            for spec in meta.round:
                if type(spec) is str:
                    raise MetaTemplateError("a chat model's meta template round cannot hold plain strings",
                                            field="meta_template.round", value=spec)
                m = Merged(spec, round_turns.get(spec.role))
                if for_gen and m.generate:
                    return False
                emit(m)
        return True

    def on_single(turn: Turn, gen: bool) -> bool:
        role = resolve_role(turn, meta, "template")
        m = Merged(meta.roles[role], turn)
        if gen and m.generate:
            return False
        emit(m)
        return True

    walk(prompt.items, meta, mode, on_string, on_rounds, on_single)
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
