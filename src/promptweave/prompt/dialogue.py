"""The typed intermediate form between filled templates and rendering.

A :class:`Dialogue` is a flat sequence of items in the order the reference's
PromptList holds them: plain strings, role :class:`Turn` s and
:class:`SectionMark` s that open and close the ``begin`` / ``ice`` /
``round`` / ``end`` sections. Keeping it flat (rather than nested) is what makes
rendering byte-compatible with the reference's walk, including its quirks
(strings inside a round emitted before the round, ice spliced into a string).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Union

SECTIONS = ("begin", "ice", "round", "end")


@dataclass(frozen=True, slots=True)
class SectionMark:
    """Opens (``pos='begin'``) or closes (``pos='end'``) a section."""

    section: str
    pos: str

    def to_json(self) -> dict[str, str]:
        return {"section": self.section, "pos": self.pos}


@dataclass(frozen=True, slots=True)
class ContentPart:
    """One part of a multimodal message: ``type`` is text / image_url / video_url / audio_url."""

    type: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, **self.data}


@dataclass(frozen=True, slots=True)
class Turn:
    """A role's utterance. ``prompt`` is the filled text; ``parts`` the multimodal content, if any.

    ``extra`` keeps any further keys a template item carried (they override the
    meta template's role settings, as in the reference).
    """

    role: str
    prompt: str | None = None
    fallback_role: str | None = None
    parts: tuple[ContentPart, ...] | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    def with_prompt(self, prompt: str | None) -> "Turn":
        return Turn(self.role, prompt, self.fallback_role, self.parts, self.extra)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role}
        if self.fallback_role is not None:
            out["fallback_role"] = self.fallback_role
        for k, v in self.extra:
            out[k] = v
        if self.prompt is not None:
            out["prompt"] = self.prompt
        if self.parts is not None:
            out["prompt_mm"] = [p.to_json() for p in self.parts]
        return out


Item = Union[str, Turn, SectionMark]


@dataclass(frozen=True, slots=True)
class Dialogue:
    """An ordered, immutable list of prompt items (PromptList's typed successor)."""

    items: tuple[Item, ...]

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __add__(self, other: "Dialogue") -> "Dialogue":
        return Dialogue(self.items + other.items)

    def turns(self) -> list[Turn]:
        return [i for i in self.items if isinstance(i, Turn)]

    def to_json(self) -> list[Any]:
        return [i if isinstance(i, str) else i.to_json() for i in self.items]


Prompt = Union[str, Dialogue]
"""What a filled template produces: a plain string or a Dialogue."""
