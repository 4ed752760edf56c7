"""Stand-in row values for ``lint --no-data`` that the real loaders would add beyond ``reader_cfg``'s columns.

AISBench's multimodal loaders build a ``content`` column (``<AIS_..._START>`` segments) that no ``reader_cfg``
lists; a template with ``prompt_mm`` turns reads it. Without data the stand-in row gets one such value holding a
segment for each modality the template's ``prompt_mm`` parts offer, so the prompt is built (and its parts checked)
as a real row's would be.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.prompt.multimodal import CONTENT_COLUMN, MODALITIES, build_content


def _mm_modalities(obj: Any, found: dict[str, None]) -> None:
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            if k == "prompt_mm" and isinstance(v, Mapping):
                for m in v:
                    if m in MODALITIES:
                        found.setdefault(m, None)
            else:
                _mm_modalities(v, found)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _mm_modalities(v, found)


def stand_in_columns(raw_dataset: Mapping[str, Any]) -> dict[str, Any]:
    """Extra stand-in columns for one raw dataset dict: ``content`` when its ``infer_cfg`` has ``prompt_mm`` turns.

    Media segments come first, then the text, as most AISBench loaders order them; each payload is ``<modality>``.
    """
    infer = raw_dataset.get("infer_cfg") if isinstance(raw_dataset, Mapping) else None
    found: dict[str, None] = {}
    _mm_modalities(infer, found)
    if not found:
        return {}
    parts = [(m, f"<{m}>") for m in found if m != "text"]
    if "text" in found:
        parts.append(("text", "<question>"))
    return {CONTENT_COLUMN: build_content(parts)}
