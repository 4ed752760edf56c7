"""How a model or dataset name becomes a file name in the work dir (the one rule every reader and writer uses).

Names come from configs and may be anything: characters other than letters, digits, ``.``, ``_``
and ``-`` become ``_``, and a name too long for a file name (Linux allows 255 bytes) keeps its
first characters plus a hash of the whole name, so two long names never share a file. The full
name stays inside the files (``model`` / ``dataset`` fields).
"""
from __future__ import annotations

import hashlib
import re

MAX_NAME_CHARS = 120  # leaves room for suffixes such as ".jsonl.partial" and shard fingerprints


def file_name(name: str) -> str:
    """The work dir's file (or folder) name for a model or dataset name."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("._") or "unnamed"
    if len(slug) <= MAX_NAME_CHARS:
        return slug
    digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{slug[:MAX_NAME_CHARS - 17].rstrip('._')}-{digest}"


__all__ = ["MAX_NAME_CHARS", "file_name"]
