"""AISBench multimodal sets whose rows carry a ``content`` column of ``<AIS_..._START>`` segments: the MM custom
JSONL (``type`` + ``path`` list + question) and the media encoding TextVQA's loader (``suites/textvqa.py``) shares."""
from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    jsonl,
    need,
    rows,
)
from promptweave.data.sources import check_regular
from promptweave.prompt.multimodal import CONTENT_TAG, MARKERS


def media_b64(ctx: LoadContext, path: Any, where: str, f: Path) -> str:
    if not isinstance(path, str):
        raise ctx.fail("a media path must be a string", file=f, where=where, value=path)
    return base64.b64encode(check_regular(Path(path)).read_bytes()).decode("ascii")


def mm_custom(ctx: LoadContext, path: str, mm_type: str, num_frames: int = 5) -> Splits:
    """JSONL rows of ``type`` (image / video / audio), ``path`` (a list of files) and ``question``: ``content``
    holds each file (its path, or its base64 with ``mm_type='base64'``) then the question."""
    if mm_type not in ("path", "base64"):
        raise ctx.fail("mm_type must be 'path' or 'base64'", where="mm_type", value=mm_type)
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, line in jsonl(f):
        row = dict(need(ctx, line, ("type", "path", "question"), file=f, where=loc))
        kind = row["type"]
        if kind not in ("image", "video", "audio") or not isinstance(row["path"], list):
            raise ctx.fail("each row needs type image / video / audio and a list of paths", file=f, where=loc,
                           value={"type": kind, "path": row["path"]})
        if mm_type == "base64" and kind == "video":
            raise ctx.fail("video frames as base64 need video decoding, which the native loader does not do; use "
                           "mm_type='path' (the model server reads the file) or install ais_bench",
                           where="mm_type", value=mm_type)
        content = ""
        for p in row["path"]:
            content += MARKERS[kind] + (p if mm_type == "path" else media_b64(ctx, p, loc, f)) + CONTENT_TAG
        row["content"] = content + MARKERS["text"] + row["question"]
        items.append((loc, row))
    return rows(items, f)
