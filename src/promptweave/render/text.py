"""Render a filled prompt to the text a local LM receives (a string, or segments with token ids)."""
from __future__ import annotations

from typing import Any

from promptweave.prompt.dialogue import Dialogue, SectionMark
from promptweave.render.meta import MetaTemplate, TokenIds
from promptweave.render.walk import Merged, walk


def join_plain(items: Any) -> str:
    """No meta template: every non-empty item, separated by newlines (an empty first item still counts)."""
    out: list[str] = []
    sep = ""
    for it in items:
        t = type(it)
        if t is SectionMark:
            continue
        text = it if t is str else (it.prompt or "")
        if text:
            out.append(sep)
            out.append(text)
        sep = "\n"
    return "".join(out)


def _add(out: list, piece: Any) -> None:
    if type(piece) is str:
        if piece:
            out.append(piece)
    else:
        out.extend(piece)


def finish(parts: list) -> Any:
    """Join rendered pieces: a str, or (when token ids are present) a list of str and id lists."""
    if all(type(p) is str for p in parts):
        return "".join(parts)
    segs: list = []
    for p in parts:
        if isinstance(p, TokenIds):
            segs.append(list(p))
        elif segs and isinstance(segs[-1], str):
            segs[-1] += p
        else:
            segs.append(p)
    return segs


def render_text(prompt: str | Dialogue, meta: MetaTemplate | None, mode: str = "gen") -> Any:
    """The exact text (or token segments) a local LM gets for ``prompt``.

    In ``gen`` mode the last round stops at the ``generate`` role's ``begin``;
    ``ppl`` mode never stops early.
    """
    if isinstance(prompt, str):
        return prompt
    if meta is None:
        return join_plain(prompt.items)
    out: list = []
    _render(prompt, meta, mode, lambda piece, tag: _add(out, piece))
    return finish(out)


def render_text_annotated(prompt: str | Dialogue, meta: MetaTemplate | None,
                          mode: str = "gen") -> tuple[list[tuple[Any, str]], bool]:
    """Like :func:`render_text`, as (piece, tag) pairs for display, and whether generation cut it.

    Tags: ``meta`` (meta-template text), ``role:<ROLE>`` (a turn's content), ``text`` (plain strings).
    """
    if isinstance(prompt, str):
        return [(prompt, "text")], False
    if meta is None:
        return [(join_plain(prompt.items), "text")], False
    out: list[tuple[Any, str]] = []
    cut = not _render(prompt, meta, mode, lambda piece, tag: out.append((piece, tag)))
    return out, cut


def _render(prompt: Dialogue, meta: MetaTemplate, mode: str, emit: Any) -> bool:
    emit(meta.begin or "", "meta")

    def turn(m: Merged, for_gen: bool) -> bool:
        emit(m.begin, "meta")
        if for_gen and m.generate:
            return False
        emit(m.prompt or "", "role:" + m.role)
        emit(m.end, "meta")
        return True

    complete = walk(prompt.items, meta, mode, on_string=lambda s: emit(s, "text"),
                    on_round_string=lambda s: emit(s, "meta"), on_turn=turn, use_fallback=False)
    if complete:
        emit(meta.end or "", "meta")
    return complete
