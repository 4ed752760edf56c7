"""Multimodal prompts: ``prompt_mm`` part templates and the AISBench ``content`` column.

A row's ``content`` value is a run of segments separated by ``<AIS_CONTENT_TAG>``;
each segment opens with a marker naming its modality (``<AIS_TEXT_START>``,
``<AIS_IMAGE_START>``, ``<AIS_VIDEO_START>``, ``<AIS_AUDIO_START>``). Each segment
becomes one OpenAI-style content part: a copy of the turn's ``prompt_mm`` entry
for that modality with the segment written into its one slot (``{question}`` in
``text``, ``{image}`` / ``{video}`` / ``{audio}`` in the url). The slot is filled in
one pass; a segment holding ``{question}`` stays as written.

Text models get media as placeholders (``<image>``) unless asked to reproduce the
reference, which drops multimodal content for them; either way a warning says so.
"""
from __future__ import annotations

import base64
import binascii
import mimetypes
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from promptweave.errors import DataError, PromptweaveWarning, TemplateError
from promptweave.prompt.dialogue import ContentPart, Dialogue, Turn
from promptweave.prompt.text import CompiledText

CONTENT_TAG = "<AIS_CONTENT_TAG>"
CONTENT_COLUMN = "content"
MODALITIES = ("text", "image", "video", "audio")
MARKERS = {m: f"<AIS_{m.upper()}_START>" for m in MODALITIES}
PART_TYPES = {"text": "text", "image": "image_url", "video": "video_url", "audio": "audio_url"}
SLOT_NAMES = {"text": "question", "image": "image", "video": "video", "audio": "audio"}
DEFAULT_PLACEHOLDERS: Mapping[str, str] = {"image": "<image>", "video": "<video>", "audio": "<audio>"}

_ANY_MARKER = re.compile(r"<AIS_([A-Za-z0-9]+)_START>")


@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of a ``content`` value: its modality and its payload text."""

    modality: str
    payload: str


def split_content(value: Any, *, column: str = CONTENT_COLUMN, row: int | None = None,
                  file: str | None = None) -> list[Segment]:
    """Parse an AISBench ``content`` value into segments.

    Raises :class:`DataError` for a value that is not a string, an unknown
    ``<AIS_..._START>`` marker, or a marker inside a segment (a missing
    ``<AIS_CONTENT_TAG>`` before it). A segment that opens with no marker is
    dropped, as the reference does, with a warning.
    """
    where = column if row is None else f"test[{row}].{column}"
    if not isinstance(value, str):
        raise DataError("a multimodal content value must be a string of <AIS_..._START> segments", file=file,
                        field=where, value=value,
                        expected="e.g. '<AIS_IMAGE_START>cat.png<AIS_CONTENT_TAG><AIS_TEXT_START>What is it?'")
    out: list[Segment] = []
    for seg in value.split(CONTENT_TAG):
        if not seg:
            continue
        m = _ANY_MARKER.match(seg)
        if m is None:
            if seg.strip():
                warnings.warn(f"{file + ': ' if file else ''}{where}: segment {seg[:40]!r} has no "
                              "<AIS_..._START> marker and is left out (as the reference does)",
                              PromptweaveWarning, stacklevel=3)
            continue
        modality = m.group(1).lower()
        if modality not in MARKERS or m.group(0) != MARKERS[modality]:
            raise DataError(f"unknown modality marker {m.group(0)!r}", file=file, field=where, value=seg[:80],
                            expected="one of " + ", ".join(MARKERS.values()))
        payload = seg[m.end():]
        inner = _ANY_MARKER.search(payload)
        if inner is not None:
            raise DataError(f"{m.group(0)} segment runs into {inner.group(0)}: the {CONTENT_TAG} that closes "
                            "it is missing", file=file, field=where, value=seg[:80],
                            expected=f"{CONTENT_TAG} between segments")
        out.append(Segment(modality, payload))
    return out


def build_content(parts: Sequence[tuple[str, str]]) -> str:
    """The ``content`` value for ``(modality, payload)`` pairs (the inverse of :func:`split_content`)."""
    pieces = []
    for modality, payload in parts:
        if modality not in MARKERS:
            raise DataError(f"unknown modality {modality!r}", field="content", value=modality,
                            expected=", ".join(MODALITIES))
        pieces.append(MARKERS[modality] + payload + CONTENT_TAG)
    return "".join(pieces)


def file_as_base64(path: str | os.PathLike) -> str:
    """The base64 text of a file (for ``data:<mime>;base64,{image}`` templates)."""
    return base64.b64encode(Path(path).read_bytes()).decode("ascii")


# --------------------------------------------------------------------------- part templates
@dataclass(frozen=True)
class PartTemplate:
    """One ``prompt_mm`` entry, compiled: ``text`` is the string that holds the slot."""

    modality: str
    raw: Mapping[str, Any]
    url_key: str | None  # "url" when the ``…_url`` value is a dict, else None
    text: CompiledText

    def fill(self, payload: str) -> ContentPart:
        filled = self.text.fill({SLOT_NAMES[self.modality]: payload})
        data = {k: v for k, v in self.raw.items() if k != "type"}
        key = PART_TYPES[self.modality] if self.modality != "text" else "text"
        if self.url_key is None:
            data[key] = filled
        else:
            inner = dict(data[key])
            inner[self.url_key] = filled
            data[key] = inner
        return ContentPart(self.raw["type"], data)


@dataclass(frozen=True)
class MMSpec:
    """A turn's ``prompt_mm``, compiled: a part template per modality it offers."""

    parts: Mapping[str, PartTemplate]
    field: str = "prompt_mm"
    column: str = CONTENT_COLUMN

    @classmethod
    def compile(cls, raw: Mapping[str, Any], *, field: str = "prompt_mm", file: str | None = None) -> "MMSpec":
        if isinstance(raw, MMSpec):
            return raw
        if not isinstance(raw, Mapping) or not raw:
            raise TemplateError("prompt_mm must be a non-empty mapping of modality -> part", file=file, field=field,
                                value=raw, expected="keys among " + ", ".join(MODALITIES))
        parts: dict[str, PartTemplate] = {}
        for modality, part in raw.items():
            p = f"{field}.{modality}"
            if modality not in PART_TYPES:
                raise TemplateError(f"unknown modality {modality!r} in prompt_mm", file=file, field=p,
                                    expected="one of " + ", ".join(MODALITIES))
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                raise TemplateError("a prompt_mm part must be a dict with a 'type'", file=file, field=p, value=part,
                                    expected=f"dict(type={PART_TYPES[modality]!r}, ...)")
            key = PART_TYPES[modality]
            value = part.get(key)
            url_key = None
            if modality != "text" and isinstance(value, Mapping):
                url_key = "url"
                value = value.get("url")
            if not isinstance(value, str):
                want = "a string with {question}" if modality == "text" else \
                    f"a string or dict(url=...) with {{{SLOT_NAMES[modality]}}}"
                raise TemplateError(f"prompt_mm {modality} part needs '{key}'" + (".url" if url_key else ""),
                                    file=file, field=f"{p}.{key}", value=value, expected=want)
            compiled = CompiledText.parse(value)
            others = [n for n in compiled.names if n != SLOT_NAMES[modality]]
            if others:
                warnings.warn(f"{file + ': ' if file else ''}{p}: only {{{SLOT_NAMES[modality]}}} is filled in a "
                              f"prompt_mm {modality} part (from the content column); "
                              + ", ".join("{" + n + "}" for n in others) + " stays as written",
                              PromptweaveWarning, stacklevel=4)
            parts[modality] = PartTemplate(modality, dict(part), url_key, compiled)
        return cls(parts, field)

    def fill(self, row: Mapping[str, Any], *, row_index: int | None = None, file: str | None = None
             ) -> tuple[ContentPart, ...]:
        where = self.column if row_index is None else f"test[{row_index}].{self.column}"
        if self.column not in row:
            raise DataError(f"a multimodal row needs a {self.column!r} column", file=file, field=where,
                            expected="'<AIS_TEXT_START>...<AIS_CONTENT_TAG><AIS_IMAGE_START>...'")
        out = []
        for seg in split_content(row[self.column], column=self.column, row=row_index, file=file):
            tpl = self.parts.get(seg.modality)
            if tpl is None:
                raise DataError(f"the row has a {seg.modality} segment but the template's prompt_mm has no "
                                f"{seg.modality!r} part", file=file, field=where, value=seg.payload[:80],
                                expected=f"{self.field}.{seg.modality}")
            out.append(tpl.fill(seg.payload))
        return tuple(out)


def fill_mm(mm: Any, row: Mapping[str, Any], *, field: str = "prompt_mm", row_index: int | None = None,
            file: str | None = None) -> tuple[ContentPart, ...]:
    """The content parts of one turn for ``row`` (``mm`` is a raw ``prompt_mm`` or an :class:`MMSpec`)."""
    if isinstance(mm, MMSpec):
        spec = mm
    else:  # a raw prompt_mm in a plain PromptTemplate: compile (and warn) once per template dict
        hit = _RAW_SPECS.get(id(mm))
        if hit is None or hit[0] is not mm:
            hit = (mm, MMSpec.compile(mm, field=field + ".prompt_mm", file=file))
            _RAW_SPECS[id(mm)] = hit
        spec = hit[1]
    return spec.fill(row, row_index=row_index, file=file)


_RAW_SPECS: dict[int, tuple[Any, MMSpec]] = {}


# --------------------------------------------------------------------------- text models
def has_parts(prompt: Any) -> bool:
    return isinstance(prompt, Dialogue) and any(type(i) is Turn and i.parts is not None for i in prompt.items)


def part_text(part: ContentPart) -> str | None:
    """A text part's text (None for media)."""
    return part.data.get("text", "") if part.type == "text" else None


def modality_of(part: ContentPart) -> str:
    for m, t in PART_TYPES.items():
        if part.type == t:
            return m
    return part.type.removesuffix("_url")


@dataclass
class MediaText:
    """How a text model sees content parts.

    ``placeholders`` maps a modality to the text written for each such part
    (text parts keep their text; parts are joined with ``joiner``). With
    ``placeholders=None`` media is dropped, as AISBench does for text models.
    Either way the first prompt that loses media warns once.
    """

    placeholders: Mapping[str, str] | None = field(default_factory=lambda: dict(DEFAULT_PLACEHOLDERS))
    joiner: str = "\n"
    _warned: bool = field(default=False, repr=False, compare=False)

    def turn_text(self, parts: Sequence[ContentPart]) -> str | None:
        if self.placeholders is None:
            return None
        out = []
        for p in parts:
            t = part_text(p)
            if t is None:
                m = modality_of(p)
                t = self.placeholders.get(m, f"<{m}>")
            out.append(t)
        return self.joiner.join(out)

    def apply(self, prompt: Any, *, model: str = "") -> Any:
        """``prompt`` with every turn's parts turned into text for a text model."""
        if not has_parts(prompt):
            return prompt
        items = []
        media = 0
        for it in prompt.items:
            if type(it) is Turn and it.parts is not None:
                media += sum(1 for p in it.parts if p.type != "text")
                text = self.turn_text(it.parts)
                if text is None and self.placeholders is None:
                    media += sum(1 for p in it.parts if p.type == "text")
                it = Turn(it.role, text if it.prompt is None else it.prompt + (self.joiner + text if text else ""),
                          it.fallback_role, None, it.extra)
            items.append(it)
        if media and not self._warned:
            self._warned = True
            who = f"text model {model!r}" if model else "a text model"
            if self.placeholders is None:
                msg = (f"{who} gets no multimodal content: {media} content part(s) dropped, as AISBench does for "
                       "text models (dialect='aisbench'); use the default dialect to render placeholders instead")
            else:
                msg = (f"{who} cannot take media: each image/video/audio part is written as a placeholder "
                       f"such as {self.placeholders.get('image', '<image>')!r}")
            warnings.warn(msg, PromptweaveWarning, stacklevel=3)
        return Dialogue(tuple(items))


# --------------------------------------------------------------------------- viewing
def _human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"


def part_label(part: ContentPart | Mapping[str, Any], *, max_text: int = 60) -> str:
    """A short label for a content part, e.g. ``[image: data:image/png (base64, 67 B)]``.

    Base64 data is measured (decoded size), local ``file://`` paths are
    measured if the file exists, other URLs are shown shortened.
    """
    if isinstance(part, Mapping):
        part = ContentPart(str(part.get("type", "?")), {k: v for k, v in part.items() if k != "type"})
    if part.type == "text":
        t = str(part.data.get("text", ""))
        return t if len(t) <= max_text else t[:max_text - 3] + "..."
    m = modality_of(part)
    v = part.data.get(part.type)
    url = v.get("url") if isinstance(v, Mapping) else v
    if not isinstance(url, str):
        return f"[{m}]"
    if url.startswith("data:") and "," in url:
        head, data = url.split(",", 1)
        if head.endswith(";base64"):
            try:
                size = len(base64.b64decode(data, validate=False))
            except (binascii.Error, ValueError):
                size = len(data)
            return f"[{m}: {head[5:-7] or 'data'} (base64, {_human_size(size)})]"
        return f"[{m}: {head[5:] or 'data'} ({_human_size(len(data))})]"
    short = url if len(url) <= 48 else url[:22] + "..." + url[-22:]
    if url.startswith("file://"):
        p = Path(url[7:])
        if p.is_file():
            return f"[{m}: {short} ({_human_size(p.stat().st_size)})]"
        return f"[{m}: {short} (missing file)]"
    return f"[{m}: {short}]"


def data_url(path: str | os.PathLike, mime: str | None = None) -> str:
    """A ``data:`` URL holding a file's bytes (mime type guessed from the name)."""
    mime = mime or mimetypes.guess_type(str(path))[0] or "application/octet-stream"
    return f"data:{mime};base64,{file_as_base64(path)}"


__all__ = ["CONTENT_TAG", "MARKERS", "MODALITIES", "Segment", "split_content", "build_content", "MMSpec",
           "PartTemplate", "fill_mm", "MediaText", "part_label", "data_url", "file_as_base64", "has_parts"]
