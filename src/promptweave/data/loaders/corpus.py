"""Text corpora scored by the corpus-loss forms.

``InferencePPLDataset``: ``<path>/<name>.jsonl`` with ``text`` and ``label`` spans; ``LLMCompressionDataset``:
``<path>/<name>.json`` or ``.jsonl`` with ``content``. Both keep the first ``samples`` rows (all when None), then
drop rows whose text is empty, as the reference does.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, regular, rows


def _subset(ctx: LoadContext, path: str, name: Any, exts: tuple[str, ...]) -> Path:
    folder = ctx.find(path, local_mode=True)
    for ext in exts:
        f = folder / f"{name}.{ext}"
        if f.is_file():
            return f
    raise ctx.fail(f"no {name}.{' or .'.join(exts)} in {folder}", file=folder, where="name", value=name)


def _records(f: Path) -> list[tuple[str, Any]]:
    """JSON lines, or one JSON array (the ``datasets`` json builder reads both)."""
    text = regular(f).read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return [(f"item {i}", r) for i, r in enumerate(json.loads(text))]
    return jsonl(f)


def _corpus(ctx: LoadContext, f: Path, column: str, samples: Any) -> Splits:
    items = _records(f)
    if samples is not None:
        items = items[:int(samples)]
    kept = []
    for loc, r in items:
        row = dict(need(ctx, r, (column,), file=f, where=loc))
        if row[column]:  # the reference drops empty texts
            kept.append((loc, row))
    return rows(kept, f)


def inference_ppl(ctx: LoadContext, path: str, name: Any = None, samples: Any = None) -> Splits:
    """``<path>/<name>.jsonl``: ``text`` and its ``label`` spans (InferencePPLOnlyInferencer)."""
    return _corpus(ctx, _subset(ctx, path, name, ("jsonl",)), "text", samples)


def llm_compression(ctx: LoadContext, path: str, name: Any = None, samples: Any = None) -> Splits:
    """``<path>/<name>.json`` or ``.jsonl``: ``content`` documents (SWCELossInferencer)."""
    return _corpus(ctx, _subset(ctx, path, name, ("json", "jsonl")), "content", samples)
