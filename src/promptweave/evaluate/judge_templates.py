"""Judge prompt templates that reference dataset modules define as classes, reimplemented as data → prompt.

A judge ``prompt_template`` is normally a ``PromptTemplate`` / ``RawPromptTemplate`` built by the prompt engine.
Some reference datasets ship their own template class instead; the ones whose prompt is plain data (row columns
placed into messages, no model or tool involved) are registered by their suites (``JUDGE_TEMPLATES``). Each has
``kind_name`` and ``fill_entry(entry)``, which returns the filled Dialogue the judge model's meta template renders.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.compat.suites import Registry


def replace_each(text: str, values: Mapping[str, Any]) -> str:
    """``{name}`` → ``str(value)`` for each name in turn (a later name also fills what an earlier value brought
    in), unknown names left as written: the references' ``safe_format``."""
    for k, v in values.items():
        text = text.replace("{" + str(k) + "}", str(v))
    return text


# reference template class name -> our class: the suites' (no generic one yet)
JUDGE_TEMPLATES: Registry = Registry({}, "JUDGE_TEMPLATES")


def template_kind(cfg: Any) -> str:
    t = cfg.get("type", "PromptTemplate") if isinstance(cfg, Mapping) else None
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    return str(name).rsplit(".", 1)[-1]
