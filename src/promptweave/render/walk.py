"""The section walk shared by the text and chat renderers.

A filled Dialogue is walked in order; ``round``/``ice`` sections are split
into rounds (a new round starts when a role's position in the meta template's
round does not move forward) and each round is rendered in the meta
template's role order. ``begin``/``end`` sections render turn by turn.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from promptweave.errors import RoleError, TemplateError
from promptweave.prompt.dialogue import SectionMark, Turn
from promptweave.render.meta import MetaTemplate, RoleSpec


class Merged:
    """A meta role's settings with a dialogue turn's own keys laid over them."""

    __slots__ = ("begin", "prompt", "end", "generate", "api_role", "parts", "role")

    def __init__(self, spec: RoleSpec, turn: Turn | None) -> None:
        self.role = spec.role
        self.begin, self.end, self.generate, self.api_role = spec.begin, spec.end, spec.generate, spec.api_role
        self.prompt = spec.prompt
        self.parts = None
        if turn is not None:
            if turn.prompt is not None:
                self.prompt = turn.prompt
            self.parts = turn.parts
            for k, v in turn.extra:
                if k in ("begin", "end", "generate", "api_role"):
                    setattr(self, k, v)


def resolve_role(turn: Turn, meta: MetaTemplate, where: str) -> str:
    if turn.role in meta.roles:
        return turn.role
    if turn.fallback_role is not None and turn.fallback_role in meta.roles:
        return turn.fallback_role
    known = ", ".join(meta.roles)
    if turn.fallback_role is None:
        raise RoleError(f"role {turn.role!r} is not in the model's meta template and the turn has no fallback_role",
                        field=where, value=turn.role, expected=f"one of {known}, or a fallback_role")
    raise RoleError(f"neither role {turn.role!r} nor fallback_role {turn.fallback_role!r} is in the model's meta "
                    "template", field=where, value=turn.role, expected=f"one of {known}")


def top_level_turns(items: Sequence[Any]) -> list[Turn]:
    """Turns directly inside a section slice (items of nested sections belong to those)."""
    depth = 0
    out = []
    for it in items:
        t = type(it)
        if t is SectionMark:
            depth += 1 if it.pos == "begin" else -1
        elif t is Turn and depth == 0:
            out.append(it)
    return out


def split_rounds(turns: Sequence[Turn], meta: MetaTemplate, *, use_fallback: bool) -> list[dict[str, Turn]]:
    """Group turns into rounds; each round maps a resolved role to its turn."""
    rounds: list[dict[str, Turn]] = [{}]
    last = -1
    for turn in turns:
        idx = meta.round_index.get(turn.role)
        if idx is None and use_fallback and turn.fallback_role is not None:
            idx = meta.round_index.get(turn.fallback_role)
        if idx is None:
            hint = " (fallback_role is not consulted inside rounds for text models)" if not use_fallback else ""
            raise RoleError(f"role {turn.role!r} in a round is not one of the meta template's round roles{hint}",
                            field="round", value=turn.role,
                            expected="one of " + ", ".join(r.role for r in meta.round if isinstance(r, RoleSpec)))
        if idx <= last:
            rounds.append({})
        last = idx
        key = turn.role if turn.role in meta.roles else (turn.fallback_role or turn.role)
        rounds[-1][key] = turn
    return rounds


def walk(items: Sequence[Any], meta: MetaTemplate, mode: str, *,
         on_string: Callable[[str], None],
         on_round_string: Callable[[str], None],
         on_turn: Callable[[Merged, bool], bool],
         use_fallback: bool) -> bool:
    """Walk the items, calling ``on_turn(merged, for_gen)`` for each turn to render.

    ``round``/``ice`` sections render every meta round role per round (``for_gen``
    only in the last round of the ``round`` section in gen mode); ``begin``/``end``
    turns render one by one. ``on_turn`` returns False where generation starts;
    the walk then stops and returns False.
    """
    stack: list[tuple[str, int]] = []
    gen = mode == "gen"

    def rounds(turns: list[Turn], gen_last: bool) -> bool:
        split = split_rounds(turns, meta, use_fallback=use_fallback)
        last = len(split) - 1
        for r, round_turns in enumerate(split):
            for_gen = gen_last and r == last
            for spec in meta.round:
                if type(spec) is str:
                    on_round_string(spec)
                elif not on_turn(Merged(spec, round_turns.get(spec.role)), for_gen):
                    return False
        return True

    for i, item in enumerate(items):
        t = type(item)
        if t is str:
            on_string(item)
        elif t is SectionMark:
            if item.pos == "begin":
                stack.append((item.section, i + 1))
                continue
            if not stack or stack[-1][0] != item.section:
                raise TemplateError(f"section {item.section!r} closed without being opened", field="template")
            name, start = stack.pop()
            if name in ("round", "ice"):
                if not rounds(top_level_turns(items[start:i]), gen and name == "round"):
                    return False
        else:
            if not stack:
                raise TemplateError("a turn outside any section", field="template", value=item.role)
            if stack[-1][0] in ("begin", "end"):
                role = resolve_role(item, meta, "template")
                if not on_turn(Merged(meta.roles[role], item), gen):
                    return False
    return True
