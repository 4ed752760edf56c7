"""Render a filled prompt to the text a local LM receives (a string, or segments with token ids)."""
from __future__ import annotations

from typing import Any

from promptweave.prompt.dialogue import Dialogue, SectionMark, Turn
from promptweave.render.meta import MetaTemplate, RoleSpec, TokenIds
from promptweave.render.walk import Merged, resolve_role, split_rounds, walk


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
    _add(out, meta.begin or "")

    def on_string(s: str) -> None:
        out.append(s)

    def on_rounds(turns: list[Turn], gen_last: bool) -> bool:
        rounds = split_rounds(turns, meta, use_fallback=False)
        last = len(rounds) - 1
        for r, round_turns in enumerate(rounds):
            for_gen = gen_last and r == last
            for spec in meta.round:
                if type(spec) is str:
                    out.append(spec)
                    continue
                m = Merged(spec, round_turns.get(spec.role))
                _add(out, m.begin)
                if for_gen and m.generate:
                    return False
                _add(out, m.prompt or "")
                _add(out, m.end)
        return True

    def on_single(turn: Turn, gen: bool) -> bool:
        role = resolve_role(turn, meta, "template")
        m = Merged(meta.roles[role], turn)
        _add(out, m.begin)
        if gen and m.generate:
            return False
        _add(out, m.prompt or "")
        _add(out, m.end)
        return True

    if walk(prompt.items, meta, mode, on_string, on_rounds, on_single):
        _add(out, meta.end or "")
    return finish(out)
