"""OpenCompass's ``RawPromptTemplate``: OpenAI-style messages given directly, as a dialogue template.

The reference fills each message's ``content`` and sends the list to a chat API as is; a string element equal to
``ice_token`` is where in-context examples (the ice template's messages) go; other strings are dropped. Here the
messages become a begin/round dialogue (system → SYSTEM, user → HUMAN, assistant → BOT), so the same single-pass
filling, shots and renderers apply: a chat model receives the same messages, a text model gets them through its
meta template (the reference has no text form; this one is promptweave's). ``{'expand_column': 'history'}`` splices
the row's own message list in at that place (each message's text inserted as is, never read as template syntax).
Difference, by design: an empty trailing assistant message is where generation starts rather than an empty message
sent to the API.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.errors import TemplateError, UnsupportedError

_ROLES = {"system": "SYSTEM", "user": "HUMAN", "assistant": "BOT"}
EXPAND_ROLE = "\x00expand_column"  # a marker turn: never a real role name


def expand_turns(column: str, value: Any, *, field: str) -> list[Any]:
    """The row's message list (``[{'role': 'user', 'content': ...}, ...]``) as dialogue turns."""
    from promptweave.errors import DataError
    from promptweave.prompt.dialogue import Turn

    if not isinstance(value, (list, tuple)):
        raise DataError(f"expand_column {column!r} must hold a list of messages", field=f"{field}.{column}",
                        value=value, expected="[{'role': 'user', 'content': '...'}, ...]")
    out = []
    for n, m in enumerate(value):
        role = m.get("role") if isinstance(m, Mapping) else None
        content = m.get("content") if isinstance(m, Mapping) else None
        if role not in _ROLES or not isinstance(content, str):
            raise DataError("each message needs a role (system, user or assistant) and text content",
                            field=f"{field}.{column}[{n}]", value=m)
        out.append(Turn(_ROLES[role], content))
    return out


def raw_messages_to_dialogue(messages: Any, *, ice_token: str | None = "</E>", format_variables: bool = True,
                             as_ice: bool = False, file: str | None = None, field: str = "messages") -> dict:
    """A ``dict(begin=[...], round=[...])`` dialogue with the same messages.

    ``as_ice`` builds the in-context example form (string elements dropped, as the reference's
    ``generate_ice_item`` does).
    """
    if not isinstance(messages, list) or not messages:
        raise TemplateError("RawPromptTemplate messages must be a non-empty list of message dicts", file=file,
                            field=field, value=messages, expected="[{'role': 'user', 'content': '{question}'}]")
    begin: list[Any] = []
    rnd: list[Any] = []
    for i, msg in enumerate(messages):
        where = f"{field}[{i}]"
        if isinstance(msg, str):
            if as_ice or msg != ice_token:
                continue  # the reference skips strings that are not the ice token
            (rnd if rnd else begin).append(msg)
            continue
        if not isinstance(msg, Mapping):
            raise TemplateError("a message must be a dict with role and content, or the ice token string",
                                file=file, field=where, value=msg)
        if "expand_column" in msg:
            col = msg["expand_column"]
            if not isinstance(col, str) or not col:
                raise TemplateError("expand_column must name a data column", file=file,
                                    field=f"{where}.expand_column", value=col)
            rnd.append({"role": EXPAND_ROLE, "expand_column": col})
            continue
        role = msg.get("role")
        if role not in _ROLES:
            raise TemplateError("a message role must be system, user or assistant", file=file, field=f"{where}.role",
                                value=role)
        if "content" not in msg:
            raise TemplateError("a message needs 'content'", file=file, field=f"{where}.content")
        content = msg["content"]
        if not isinstance(content, str):
            raise UnsupportedError("only text message content is supported", file=file, field=f"{where}.content",
                                   value=content)
        if not format_variables and "{" in content:
            raise UnsupportedError("format_variables=False with braces in the content is not supported (the "
                                   "braces would be read as placeholders)", file=file, field=f"{where}.content",
                                   value=content)
        turn = {"role": _ROLES[role], "prompt": content}
        if role == "system" and not rnd:
            begin.append(turn)
        else:
            rnd.append(turn)
    if not rnd:
        if not begin:
            raise TemplateError("RawPromptTemplate has no messages to send", file=file, field=field, value=messages)
        rnd, begin = [t for t in begin if isinstance(t, Mapping)], [t for t in begin if isinstance(t, str)]
    out: dict[str, Any] = {"round": rnd}
    if begin:
        out["begin"] = begin
    return out


def raw_template_config(cfg: Mapping[str, Any], *, as_ice: bool = False, file: str | None = None,
                        field: str = "prompt_template") -> dict:
    """A ``RawPromptTemplate`` config → the equivalent ``PromptTemplate`` config (``template`` + ``ice_token``)."""
    cfg = dict(cfg)
    cfg.pop("type", None)
    known = {"messages", "format_variables", "ice_token"}
    extra = sorted(set(cfg) - known)
    if extra:
        raise TemplateError(f"unknown RawPromptTemplate setting {extra[0]!r}", file=file, field=f"{field}.{extra[0]}",
                            expected="messages, format_variables, ice_token")
    if "messages" not in cfg:
        raise TemplateError("RawPromptTemplate needs 'messages'", file=file, field=f"{field}.messages")
    ice_token = cfg.get("ice_token", "</E>")
    messages = cfg["messages"]
    template = raw_messages_to_dialogue(messages, ice_token=ice_token,
                                        format_variables=bool(cfg.get("format_variables", True)), as_ice=as_ice,
                                        file=file, field=f"{field}.messages")
    uses_ice = not as_ice and isinstance(messages, list) and ice_token in messages
    return {"template": template, **({"ice_token": ice_token} if uses_ice else {})}

