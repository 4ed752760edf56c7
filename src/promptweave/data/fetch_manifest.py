"""The fetch manifest, ``ROOT/.promptweave-fetch/manifest.json``: what ``data fetch`` got (an archive and its md5, a
hub dataset and the commit it is pinned to), so that a second fetch of present data sends no request."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from promptweave.errors import DataFetchError

STATE_DIR = ".promptweave-fetch"
MANIFEST = "manifest.json"


def state_dir(root: Path) -> Path:
    """``root``'s fetch state folder, made if absent; a link there is refused (it could point anywhere)."""
    d = root / STATE_DIR
    if d.is_symlink():
        raise DataFetchError(f"{d} is a link; refusing to write through it", field="--data-root", value=str(root))
    d.mkdir(parents=True, exist_ok=True)
    return d


def read_manifest(state: Path) -> dict[str, Any]:
    """The manifest's entries by key; an absent, linked or unreadable manifest reads as empty (fetch again)."""
    p = state / MANIFEST
    try:
        data = json.loads(p.read_text(encoding="utf-8")) if p.is_file() and not p.is_symlink() else {}
    except (OSError, ValueError, RecursionError):
        data = {}
    return data if isinstance(data, dict) else {}


def write_entry(state: Path, key: str, entry: dict[str, Any]) -> None:
    """Set one entry, written to a fresh file and renamed over the manifest (never half-written)."""
    data = read_manifest(state)
    data[key] = entry
    tmp = state / f".{MANIFEST}.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, state / MANIFEST)
