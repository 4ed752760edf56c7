"""On-disk cache for retrieval indexes, keyed by a hash of the data and the settings that built them."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

import numpy as np

ENV = "PROMPTWEAVE_CACHE"


def cache_dir() -> Path:
    """``$PROMPTWEAVE_CACHE`` if set, else ``~/.cache/promptweave``."""
    env = os.environ.get(ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "promptweave"


def key_of(kind: str, settings: dict[str, Any], texts: Iterable[str]) -> str:
    """Hash of what an index depends on: its kind, settings and every input text (length-prefixed)."""
    h = hashlib.sha256()
    h.update(kind.encode())
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    for t in texts:
        b = t.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()[:32]


def load_arrays(kind: str, key: str) -> dict[str, np.ndarray] | None:
    path = cache_dir() / kind / f"{key}.npz"
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError):  # a truncated or foreign file: rebuild rather than fail
        return None


def save_arrays(kind: str, key: str, arrays: dict[str, np.ndarray]) -> Path | None:
    """Write atomically (temp file + rename) so a crash never leaves a half-written entry."""
    folder = cache_dir() / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        final = folder / f"{key}.npz"
        os.replace(tmp, final)
        return final
    except OSError:  # caching is an optimisation: a read-only home must not break retrieval
        return None
