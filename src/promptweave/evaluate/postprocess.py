"""Answer postprocessors: turn a model's raw text into the answer that gets scored.

Names follow OpenCompass's where one exists, so configs written for it work unchanged.
"""
from __future__ import annotations

import re
from typing import Callable

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def strip_postprocess(text: str) -> str:
    return str(text).strip()


def first_capital_postprocess(text: str) -> str:
    """The first upper-case letter in the text, or ''."""
    for ch in str(text):
        if ch.isupper():
            return ch
    return ""


def last_capital_postprocess(text: str) -> str:
    """The last upper-case letter in the text, or ''."""
    for ch in reversed(str(text)):
        if ch.isupper():
            return ch
    return ""


def _option_patterns(options: str) -> list[re.Pattern]:
    opt = f"[{re.escape(options)}]"
    return [
        # an explicit commitment: "answer is (B)", "Answer: B", "答案是B", "the correct option is B"
        re.compile(rf"(?i:答案|answer|option|choice)\s*(?i:is|是|为|应该是|should be)?\s*[:：]?\s*[(\[*]*({opt})(?![A-Za-z])"),
        re.compile(rf"^\s*[(\[*]*({opt})(?![A-Za-z])"),  # the reply starts with the letter
        re.compile(rf"\(({opt})\)"),
        re.compile(rf"(?<![A-Za-z])({opt})(?![A-Za-z])"),  # a standalone letter
    ]


def first_option_postprocess(text: str, options: str = "ABCD") -> str:
    """The option letter the text commits to: an explicit 'answer is X' first, else the first standalone letter."""
    text = str(text)
    for pat in _option_patterns(options):
        m = pat.search(text)
        if m:
            return m.group(1)
    return ""


def last_option_postprocess(text: str, options: str = "ABCD") -> str:
    """The last standalone option letter in the text, or ''."""
    found = re.findall(rf"\b([{re.escape(options)}])\b", str(text))
    return found[-1] if found else ""


def _clean_number(s: str) -> str:
    s = s.replace(",", "")
    if "." in s:
        s = s.rstrip("0").rstrip(".") if re.fullmatch(r"-?\d*\.\d+", s) else s
    return s


def first_number_postprocess(text: str) -> str:
    """The first number in the text (thousands separators removed), or ''."""
    m = _NUMBER.search(str(text))
    return _clean_number(m.group(0)) if m else ""


def last_number_postprocess(text: str) -> str:
    """The last number in the text (thousands separators removed), or ''."""
    found = _NUMBER.findall(str(text))
    return _clean_number(found[-1]) if found else ""


def regex_postprocess(text: str, pattern: str, group: int | str = 1, flags: str = "") -> str:
    """The given group of the first match of ``pattern``, or '' when it does not match."""
    fl = 0
    for ch in flags.lower():
        fl |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}.get(ch, 0)
    m = re.search(pattern, str(text), fl)
    if not m:
        return ""
    return m.group(group) or ""


def general_postprocess(text: str) -> str:
    """Text up to the first newline, full stop or comma; punctuation and English articles removed."""
    head = re.split(r"[\n.,]", str(text), maxsplit=1)[0]
    head = re.sub(r"[^\w\s]", "", head)
    head = re.sub(r"\b(?:a|an|the)\b", "", head, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", head).strip()


def first_line_postprocess(text: str) -> str:
    return str(text).strip().split("\n", 1)[0].strip()


POSTPROCESSORS: dict[str, Callable[..., str]] = {
    "strip": strip_postprocess,
    "strip_postprocess": strip_postprocess,
    "first_capital_postprocess": first_capital_postprocess,
    "first_capital": first_capital_postprocess,
    "last_capital_postprocess": last_capital_postprocess,
    "first_option_postprocess": first_option_postprocess,
    "first_option": first_option_postprocess,
    "last_option_postprocess": last_option_postprocess,
    "first_number_postprocess": first_number_postprocess,
    "first_number": first_number_postprocess,
    "last_number_postprocess": last_number_postprocess,
    "last_number": last_number_postprocess,
    "regex_postprocess": regex_postprocess,
    "regex": regex_postprocess,
    "general_postprocess": general_postprocess,
    "first_line_postprocess": first_line_postprocess,
}
