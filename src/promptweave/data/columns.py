"""Columns a dataset's templates read, so the reader keeps them beside reader_cfg's.

The references fill a template from the whole row (OpenCompass's ``PromptTemplate.generate_item`` formats with
every column; AISBench's multimodal template reads ``content``), so a column a template names must survive the
reader even when ``reader_cfg`` does not list it.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CONTENT_COLUMN = "content"  # AISBench's multimodal prompt column (see prompt/multimodal.py)

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class TemplateColumns:
    names: tuple[str, ...]
    multimodal: bool


def template_columns(infer_cfg: Any) -> TemplateColumns:
    """``{name}`` placeholders in every template string of ``infer_cfg``; ``content`` for multimodal templates."""
    names: dict[str, None] = {}
    multimodal = False
    stack = [infer_cfg]
    seen = 0
    while stack and seen < 100_000:  # bounded: configs are small, a pathological one is not walked forever
        seen += 1
        node = stack.pop()
        if isinstance(node, str):
            names.update((m, None) for m in _PLACEHOLDER.findall(node))
        elif isinstance(node, Mapping):
            if "prompt_mm" in node or node.get("type") in ("MMPromptTemplate",):
                multimodal = True
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    if multimodal:
        names[CONTENT_COLUMN] = None
    return TemplateColumns(tuple(names), multimodal)
