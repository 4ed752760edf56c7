"""A small format grammar for a dataset's own template text (in the manner of FormatSpread).

A :class:`Format` names one choice for each of six properties of a prompt's *layout*:

* ``separator`` — what goes between a field's descriptor and its value (``Question: {q}``);
* ``spacing`` — what joins fields that the template puts on consecutive lines;
* ``casing`` — the descriptors' case (``Question`` / ``QUESTION`` / ``question``);
* ``label`` — the choice-label style (``A.``, ``(A)``, ``A)``, ``[A]``, ``A -``, ``A:``); the letter itself is
  kept, since it is what the postprocessor extracts and what a label-dict template's answer turn says
  (``lower_labels=True`` adds ``a.``/``(a)``/``a)`` for templates whose answers are not letters);
* ``choice_sep`` — what goes between listed choices;
* ``cue`` — the answer cue's wording (``Answer:`` / ``Response:`` / ...).

It is applied to the *literal text between placeholders* of a template string: every ``{name}``
slot, the ``ice_token`` and the ``sep_token`` are masked before anything is matched and put back
exactly as written, and the result is checked to hold the same slots in the same order. So a row's
values, the label keys of a label-dict template, role names, the meta template and everything the
evaluator and postprocessor read are never changed; only the words and punctuation the template
author wrote around them are.
"""
from __future__ import annotations

import bisect
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from promptweave.errors import TemplateError

SEPARATORS = (": ", ":", " : ", " - ", ":\n", " = ", " :: ", " | ")
SPACINGS = ("\n", "\n\n", " ", " || ", "; ", " -- ")
CASINGS = ("as written", "upper", "lower", "title")
LABELS = ("{}.", "({})", "{})", "[{}]", "{} -", "{}:")
LOWER_LABELS = ("{l}.", "({l})", "{l})")
CHOICE_SEPS = ("\n", " ", "; ", " | ", ", ", "\n\n")
CUES = ("Answer", "The answer", "Response", "Solution", "Correct answer", "Final answer")
CUE_WORDS = frozenset(c.lower() for c in CUES)
"""Descriptors taken as the answer cue (matched case-insensitively)."""

_MASK_OPEN, _MASK_CLOSE = "\ue010", "\ue011"  # a {slot}
_TOKEN_OPEN, _TOKEN_CLOSE = "\ue012", "\ue013"  # an ice / sep token: what follows it starts a line
_MASK_RE = re.compile("[\ue010\ue012](\\d+)[\ue011\ue013]")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
# a descriptor: one to four words at the start of a line, then a colon (not a URL's ``://``)
_DESC = re.compile(r"(?m)(?:^|(?<=\ue013))(?P<d>[A-Za-z][A-Za-z]*(?: [A-Za-z]+){0,3})(?P<sep>[ \t]*:(?!//)[ \t]*)")
# a choice label at a line start or after a space: A. / (A) / [A] / A) / A: followed by its text or a slot
# (taken as a label only in a run A, B, ...; a lone ``A:`` is a descriptor, as in Q: / A:)
_LABEL = re.compile(r"(?:(?<=\n)|^|(?<=[ \t]))(?P<lab>\((?P<l1>[A-J])\)|\[(?P<l2>[A-J])\]|(?P<l3>[A-J])[.):])"
                    r"(?P<gap>[ \t]*)(?=\ue010|[^\s])")
_LONE_NEWLINE = re.compile(r"(?<=[^\s])\n(?=[^\s])")


@dataclass(frozen=True)
class Format:
    """One point of the grammar; ``None`` keeps the template's own choice for that property."""

    separator: str | None = None
    spacing: str | None = None
    casing: str | None = None
    label: str | None = None
    choice_sep: str | None = None
    cue: str | None = None

    @property
    def is_identity(self) -> bool:
        return all(v is None for v in (self.separator, self.spacing, self.casing, self.label, self.choice_sep,
                                       self.cue))

    def describe(self) -> str:
        """One line: each property's choice (the template's own ones left out)."""
        if self.is_identity:
            return "the config's template as written"
        parts = []
        for name, value in (("sep", self.separator), ("space", self.spacing), ("case", self.casing),
                            ("labels", None if self.label is None else self.label.format("A", l="a")),
                            ("choices", self.choice_sep), ("cue", self.cue)):
            if value is not None:
                parts.append(f"{name}={value!r}")
        return " ".join(parts)

    def to_json(self) -> dict[str, str | None]:
        return {"separator": self.separator, "spacing": self.spacing, "casing": self.casing, "label": self.label,
                "choice_sep": self.choice_sep, "cue": self.cue}


def sample_formats(seed: int, *, lower_labels: bool = False) -> Any:
    """An endless, seeded stream of formats (every property drawn independently)."""
    rng = random.Random(f"promptweave-spread:{seed}")
    labels = LABELS + (LOWER_LABELS if lower_labels else ())
    while True:
        yield Format(separator=rng.choice(SEPARATORS), spacing=rng.choice(SPACINGS), casing=rng.choice(CASINGS),
                     label=rng.choice(labels), choice_sep=rng.choice(CHOICE_SEPS), cue=rng.choice(CUES))


def _case(word: str, casing: str | None) -> str:
    if casing == "upper":
        return word.upper()
    if casing == "lower":
        return word.lower()
    if casing == "title":
        return word.title()
    return word


def _mask(text: str, protect: Sequence[str]) -> tuple[str, list[str]] | None:
    """``text`` with every protected token and ``{slot}`` replaced by a numbered mask; None if it cannot be masked."""
    if any(c in text for c in (_MASK_OPEN, _MASK_CLOSE, _TOKEN_OPEN, _TOKEN_CLOSE)):
        return None
    kept: list[str] = []

    def hide(s: str) -> str:
        kept.append(s)
        if s in toks:
            return f"{_TOKEN_OPEN}{len(kept) - 1}{_TOKEN_CLOSE}"
        return f"{_MASK_OPEN}{len(kept) - 1}{_MASK_CLOSE}"

    toks = [t for t in protect if t]
    pattern = "|".join([re.escape(t) for t in sorted(toks, key=len, reverse=True)] + [_PLACEHOLDER.pattern])
    return re.sub(pattern, lambda m: hide(m.group(0)), text), kept


def _label_edits(s: str, fmt: Format) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]]]:
    """Edits for the first run of choice labels A, B, C, ... (at least two) and the spans they cover."""
    if fmt.label is None and fmt.choice_sep is None:
        return [], []
    found = [m for m in _LABEL.finditer(s)]
    run: list[re.Match] = []
    for m in found:
        letter = m.group("l1") or m.group("l2") or m.group("l3")
        if letter == "ABCDEFGHIJ"[len(run)]:
            run.append(m)
        elif run and len(run) >= 2:
            break
        else:
            run = [m] if letter == "A" else []
    if len(run) < 2:
        return [], []
    edits: list[tuple[int, int, str]] = []
    spans: list[tuple[int, int]] = []
    for n, m in enumerate(run):
        letter = m.group("l1") or m.group("l2") or m.group("l3")
        if fmt.label is not None:
            new = fmt.label.format(letter, l=letter.lower())
            edits.append((m.start("lab"), m.end("lab"), new))
        spans.append((m.start(), m.end()))
        if n and fmt.choice_sep is not None:
            start = m.start()
            while start > 0 and s[start - 1] in " \t\n":
                start -= 1
            if start < m.start() and start > run[n - 1].end():
                edits.append((start, m.start(), fmt.choice_sep))
                spans.append((start, m.start()))
    return edits, spans


class TakenSpans:
    """The spans of a text already claimed by an edit, kept merged and sorted, so asking whether ``[a, b)``
    meets one of them looks at one neighbour (a template of many lines stays linear, not quadratic).

    ``probes`` counts the stored spans looked at, for tests that bound the work."""

    def __init__(self, spans: Sequence[tuple[int, int]] = ()) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.probes = 0
        for a, b in sorted(spans):
            self.add(a, b)

    def overlaps(self, a: int, b: int) -> bool:
        """Whether ``[a, b)`` meets a stored span (``a < end and start < b``)."""
        i = bisect.bisect_left(self.starts, b) - 1  # the last span starting before b
        self.probes += 1
        return i >= 0 and a < self.ends[i]

    def add(self, a: int, b: int) -> None:
        if a >= b:
            return
        i = bisect.bisect_right(self.starts, a)
        if i and self.ends[i - 1] >= a:  # joins the span before
            i -= 1
            a = self.starts[i]
        j = i
        while j < len(self.starts) and self.starts[j] <= b:  # and every span it reaches
            b = max(b, self.ends[j])
            j += 1
            self.probes += 1
        self.starts[i:j] = [a]
        self.ends[i:j] = [b]


def apply_text(text: str, fmt: Format, *, protect: Sequence[str] = ()) -> str:
    """``text`` (one template string) in format ``fmt``; slots and ``protect`` tokens kept exactly."""
    if fmt.is_identity or not text:
        return text
    return _apply(text, fmt, tuple(protect))


@lru_cache(maxsize=8192)  # a template's strings recur (label-dict entries, ice and prompt templates, draws)
def _apply(text: str, fmt: Format, protect: tuple[str, ...]) -> str:
    masked = _mask(text, protect)
    if masked is None:
        return text
    s, kept = masked
    edits, label_spans = _label_edits(s, fmt)
    taken = TakenSpans(label_spans)
    for m in _DESC.finditer(s):
        if taken.overlaps(m.start(), m.end()):
            continue
        word = m.group("d")
        if fmt.cue is not None and word.lower() in CUE_WORDS:
            word = fmt.cue
        word = _case(word, fmt.casing)
        sep = m.group("sep")
        if fmt.separator is not None:
            after = s[m.end():m.end() + 1]
            sep = fmt.separator if sep[-1:] in " \t" or after else fmt.separator.rstrip()
            if after in ("", "\n") and sep.endswith("\n"):
                sep = sep.rstrip()  # nothing follows on this line: no new line break of our own
        edits.append((m.start(), m.end(), word + sep))
        taken.add(m.start(), m.end())
    if fmt.spacing is not None:
        for m in _LONE_NEWLINE.finditer(s):
            if not taken.overlaps(m.start(), m.end()):
                edits.append((m.start(), m.end(), fmt.spacing))
    out, pos = [], 0
    for start, end, new in sorted(edits):
        if start < pos:
            continue  # overlapping edits: the first wins
        out.append(s[pos:start])
        out.append(new)
        pos = end
    out.append(s[pos:])
    result = _MASK_RE.sub(lambda m: kept[int(m.group(1))], "".join(out))
    if _slots(result, protect) != _slots(text, protect):
        raise TemplateError("a format variant changed the template's placeholders (a bug in the format grammar)",
                            value=text)
    return result


def clear_cache() -> None:
    """Forget rewritten strings (benchmarks time a fresh process's work)."""
    _apply.cache_clear()


def _slots(text: str, protect: Sequence[str]) -> list[str]:
    masked = _mask(text, protect)
    return [] if masked is None else masked[1]


def apply_template(template: Any, fmt: Format, *, protect: Sequence[str] = ()) -> Any:
    """A template config's ``template`` value (string, dialogue or label -> template) in format ``fmt``.

    Only template strings and turns' ``prompt`` strings change; keys, roles and other turn fields are
    copied as they are.
    """
    if isinstance(template, str):
        return apply_text(template, fmt, protect=protect)
    if isinstance(template, Mapping):
        if "round" in template and all(k in ("begin", "round", "end") for k in template):
            return {k: _section(v, fmt, protect) for k, v in template.items()}
        return {label: apply_template(sub, fmt, protect=protect) for label, sub in template.items()}
    return template


def _section(value: Any, fmt: Format, protect: Sequence[str]) -> Any:
    if isinstance(value, list):
        return [_section(v, fmt, protect) for v in value]
    if isinstance(value, str):
        return apply_text(value, fmt, protect=protect)
    if isinstance(value, Mapping):
        out = dict(value)
        if isinstance(out.get("prompt"), str):
            out["prompt"] = apply_text(out["prompt"], fmt, protect=protect)
        return out
    return value


__all__ = ["CASINGS", "CHOICE_SEPS", "CUES", "Format", "LABELS", "SEPARATORS", "SPACINGS", "apply_template",
           "apply_text", "clear_cache", "sample_formats"]
