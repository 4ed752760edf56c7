"""The line of a config file where a setting is written, for errors found after the file was loaded.

A loaded config is plain values, so a value that planning refuses (a model's ``num_threads``,
say) no longer knows its line. The file is read again as text and the setting looked for by
its key: ``key=`` (a Python ``dict(...)``), ``'key':`` / ``"key":`` (a literal, JSON) or
``key:`` (YAML). With one such line that is the answer; with several, the one that also shows
the value as written, if exactly one does; otherwise None (the error names the file alone).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any


def line_of(path: Any, key: str, value: Any = None) -> int | None:
    """1-based line of ``key`` (set to ``value``) in ``path``, or None when it is not one clear line."""
    try:
        text = Path(str(path)).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    name = re.escape(key)
    pattern = re.compile(rf"""(?:(?<![\w.]){name}\s*=(?!=)|["']{name}["']\s*:|^\s*{name}\s*:)""")
    hits = [(n, line) for n, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
    if len(hits) == 1:
        return hits[0][0]
    shown = [n for n, line in hits if _shows(line, key, value)]
    return shown[0] if len(shown) == 1 else None


def _shows(line: str, key: str, value: Any) -> bool:
    at = line.find(key)
    rest = line[at + len(key):] if at >= 0 else line
    return any(form in rest for form in {repr(value), str(value)} if form)


def located(path: Any, key: str, value: Any = None) -> str:
    """``path:line`` where the line is known, else ``path``."""
    n = line_of(path, key, value)
    return f"{path}:{n}" if n else str(path)
