"""``data fetch`` for Hugging Face hub datasets: the repo a config's dataset loads by id, downloaded with
``huggingface_hub.snapshot_download`` into the hub cache (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``; the hub is
``$HF_ENDPOINT``, else huggingface.co) at a pinned revision.

The pin: ``--revision REPO=REV``, else the config's ``revision`` / ``hf_revision``, else the commit recorded in the
fetch manifest by an earlier fetch, else the commit the hub resolves ``main`` to now (recorded, and reused by every
later fetch). A recorded snapshot whose files are all in the cache sends no request at all.

The download runs in a child process with the hub's offline switches off: ``run`` and everything else stay
offline (``HF_HUB_OFFLINE=1`` is read once, when ``huggingface_hub`` is imported), and this one command goes online.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from promptweave.compat.data_ids import DATA_IDS
from promptweave.data.fetch_manifest import read_manifest, state_dir, write_entry
from promptweave.data.hub_cache import COMMIT, HUB_ID, snapshot_path
from promptweave.data.sources import FILE_FORMATS, HF_BUILDERS
from promptweave.errors import (
    DataFetchError,
    HubClientMissingError,
    HubNetworkError,
    HubRepoNotFoundError,
    HubRevisionNotFoundError,
)

# Reference dataset classes that call ``datasets.load_dataset(path, ...)`` on their ``path``: a path that is no
# local file is a hub id (promptweave's own dataset entries, with no type, read a hub id the same way).
HUB_TYPES = frozenset({
    "HFDataset", "IWSLT2017Dataset", "CluewscDataset", "CHIDDataset", "BoolQDataset", "WiCDataset", "CslDataset",
    "CrowspairsDatasetV2", "OlymMATHDataset", "SmolInstructDataset", "MRCRDataset", "TNewsDataset", "WSCDataset",
})
REVISION_KEYS = ("revision", "hf_revision")


@dataclass
class HubRepo:
    """One hub dataset repo to fetch and the datasets that read it."""

    repo_id: str
    revision: str | None  # the pin asked for (--revision, the config); None: the recorded one, else main's commit
    home: Path  # the data root whose fetch manifest records the pin
    needs: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"hf-dataset:{self.repo_id}"


@dataclass
class HubOutcome:
    repo: HubRepo
    status: str  # "fetched" | "present"
    commit: str
    snapshot: Path


def hub_id(ds: Mapping[str, Any]) -> str | None:
    """The hub dataset id ``ds`` loads, or None when it reads local files (or is no hub-reading dataset)."""
    t = ds.get("type")
    tname = (t.rsplit(".", 1)[-1] if isinstance(t, str) else getattr(t, "__name__", "")) if t is not None else ""
    if tname and tname not in HUB_TYPES:
        return None
    path = ds.get("path")
    if not isinstance(path, str) or path in HF_BUILDERS or path in DATA_IDS or ds.get("data_files") is not None:
        return None
    if not HUB_ID.fullmatch(path) or ".." in path or Path(path).suffix.lower() in FILE_FORMATS:
        return None
    return path


def config_revision(ds: Mapping[str, Any]) -> str | None:
    for k in REVISION_KEYS:
        v = ds.get(k)
        if isinstance(v, str) and v:
            return v
    return None


def parse_revisions(values: list[str] | None) -> dict[str, str]:
    """``--revision REPO=REV`` options as a dict."""
    out: dict[str, str] = {}
    for v in values or []:
        repo, sep, rev = v.partition("=")
        if not sep or not HUB_ID.fullmatch(repo) or not rev or any(c.isspace() for c in rev):
            raise DataFetchError("--revision takes REPO=REV (a hub dataset id and a branch, tag or commit)",
                                 field="--revision", value=v, expected="e.g. --revision acme/tiny=main")
        out[repo] = rev
    return out


def recorded(repo: HubRepo) -> dict[str, Any] | None:
    entry = read_manifest(state_dir(repo.home)).get(repo.key)
    return entry if isinstance(entry, dict) and COMMIT.fullmatch(str(entry.get("revision", ""))) else None


def _complete(entry: Mapping[str, Any], repo_id: str) -> Path | None:
    snap = snapshot_path(repo_id, entry["revision"])
    files = entry.get("files")
    if snap.is_dir() and isinstance(files, list) and all(isinstance(f, str) and (snap / f).is_file() for f in files):
        return snap
    return None


def fetch_hub(repo: HubRepo) -> HubOutcome:
    """Get ``repo`` into the hub cache at its pin (see the module docstring); no request when it is there."""
    entry = recorded(repo)
    want = repo.revision
    if entry is not None and want in (None, entry.get("requested"), entry["revision"]):
        snap = _complete(entry, repo.repo_id)
        if snap is not None:
            return HubOutcome(repo, "present", entry["revision"], snap)
        if want is None:
            want = entry["revision"]  # the pin recorded by the first fetch, never main's newer commit
    path = Path(_download(repo.repo_id, want))
    commit = path.name
    files = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
    write_entry(state_dir(repo.home), repo.key, {
        "kind": "hf-dataset", "repo": repo.repo_id, "requested": repo.revision if repo.revision else None,
        "revision": commit, "files": files, "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    return HubOutcome(repo, "fetched", commit, path)


# What the child runs: huggingface_hub only (no promptweave import), one JSON line on stdout.
_CHILD = r"""
import json, sys
repo, rev = sys.argv[1], sys.argv[2] or None
try:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError
except ImportError as exc:
    print(json.dumps({"error": "missing", "why": str(exc)}))
    sys.exit(0)
try:
    path = snapshot_download(repo, repo_type="dataset", revision=rev)
except RevisionNotFoundError as exc:
    print(json.dumps({"error": "revision", "why": str(exc).splitlines()[0] if str(exc) else ""}))
except (RepositoryNotFoundError, GatedRepoError) as exc:
    print(json.dumps({"error": "repo", "why": str(exc).splitlines()[0] if str(exc) else ""}))
except Exception as exc:
    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
    print(json.dumps({"error": "network", "why": type(exc).__name__ + (": " + " ".join(lines[:3]) if lines else "")}))
else:
    print(json.dumps({"path": path}))
"""


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT") or "https://huggingface.co"


def _download(repo_id: str, revision: str | None) -> str:
    if importlib.util.find_spec("huggingface_hub") is None:
        raise HubClientMissingError(f"fetching the hub dataset {repo_id!r} needs the huggingface_hub package",
                                    field="path", value=repo_id,
                                    expected="pip install 'promptweave[data]' (its datasets brings huggingface_hub)")
    env = dict(os.environ, HF_HUB_OFFLINE="0", HF_DATASETS_OFFLINE="0", TRANSFORMERS_OFFLINE="0")
    proc = subprocess.run([sys.executable, "-c", _CHILD, repo_id, revision or ""], env=env, stdout=subprocess.PIPE,
                          text=True, check=False)  # noqa: S603 - our own fixed script, the id as an argument
    try:
        got = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise HubNetworkError(f"the download of {repo_id!r} from {endpoint()} stopped (exit {proc.returncode})",
                              field="path", value=repo_id) from None
    err = got.get("error")
    if err == "missing":
        raise HubClientMissingError(f"fetching the hub dataset {repo_id!r} needs huggingface_hub: {got.get('why')}",
                                    field="path", value=repo_id,
                                    expected="pip install 'promptweave[data]' (its datasets brings huggingface_hub)")
    if err == "repo":
        raise HubRepoNotFoundError(f"{endpoint()} has no dataset repo {repo_id!r} (or it is gated or private)",
                                   field="path", value=repo_id,
                                   expected="a hub dataset id (owner/name); for a gated one, log in (HF_TOKEN)")
    if err == "revision":
        raise HubRevisionNotFoundError(f"the hub dataset {repo_id!r} has no revision {revision!r}",
                                       field="revision", value=revision,
                                       expected="a branch, tag or commit of the repo (or no revision: main's)")
    if err:
        raise HubNetworkError(f"could not fetch the hub dataset {repo_id!r} from {endpoint()}: {got.get('why')}",
                              field="path", value=repo_id,
                              expected="a reachable hub (HF_ENDPOINT for a mirror); rerun to resume")
    return str(got["path"])
