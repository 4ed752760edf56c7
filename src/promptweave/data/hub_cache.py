"""Where a Hugging Face hub dataset lies in the local hub cache, as ``huggingface_hub`` lays it out
(``<cache>/datasets--owner--name/{refs,snapshots/<commit>}``), read without any request.

``data fetch`` puts hub datasets there (``data/hub_fetch.py``); ``run`` reads the snapshot folder as a local dataset,
because ``datasets`` offline does not resolve a hub id from the hub cache by itself.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

COMMIT = re.compile(r"[0-9a-f]{40}")
# owner/name or a bare canonical name: what the hub accepts as a dataset id
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?")


def hub_cache() -> Path:
    """The hub cache folder, by ``huggingface_hub``'s rule, read from the environment now (not at import)."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(name):
            return Path(os.environ[name]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "huggingface" / "hub"


def repo_folder(repo_id: str) -> Path:
    return hub_cache() / ("datasets--" + repo_id.replace("/", "--"))


def snapshot_path(repo_id: str, commit: str) -> Path:
    return repo_folder(repo_id) / "snapshots" / commit


def find_snapshot(repo_id: str, revision: str | None = None) -> Path | None:
    """The cached snapshot of ``repo_id`` at ``revision`` (a commit, or a branch / tag the cache has a ref for);
    without one, the ``main`` ref's, else the only snapshot there is. None when the cache has no such snapshot."""
    if not HUB_ID.fullmatch(repo_id) or ".." in repo_id:
        return None
    folder = repo_folder(repo_id)
    snaps = folder / "snapshots"
    if not snaps.is_dir():
        return None
    for rev in ([revision] if revision else ["main"]):
        if COMMIT.fullmatch(rev) and (snaps / rev).is_dir():
            return snaps / rev
        ref = folder / "refs" / rev
        if ".." not in rev and ref.is_file():
            commit = ref.read_text(encoding="utf-8").strip()
            if COMMIT.fullmatch(commit) and (snaps / commit).is_dir():
                return snaps / commit
    if revision:
        return None
    found = [d for d in snaps.iterdir() if COMMIT.fullmatch(d.name) and d.is_dir()]
    return found[0] if len(found) == 1 else None
