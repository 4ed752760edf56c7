"""``promptweave data fetch``: the archives a config's datasets need, downloaded once, verified, unpacked safely.

Which archive: the references' own tables (``compat/data_urls.py``). An OpenCompass dataset path (a data id is
first mapped to its local path, as ``run`` maps it) names the archive whose table key it contains — the last
such key, as OpenCompass picks it — unpacked into ``ROOT/data/``, where ROOT is ``--data-root``, else
``$COMPASS_DATA_CACHE``, else ``~/.cache/opencompass``: the places ``run`` looks. An AISBench path
(``ais_bench/datasets/gsm8k``) is unpacked into ``ROOT/ais_bench/datasets/`` with ROOT ``--data-root``, else
``$AIS_BENCH_DATASETS_CACHE``, else the working directory.

How: each archive once per command, however many datasets share it; downloaded to a file under
``ROOT/.promptweave-fetch/`` (a cut transfer resumes with an HTTP ``Range`` request, or starts again when the
server ignores it), its md5 checked against the table's (``--md5-table FILE`` merges overrides, in OpenCompass's
``{"/gsm8k/": {"url": ..., "md5": ...}}`` format), every member checked before anything is unpacked
(``data/archive.py``), unpacked into a temporary folder and renamed into place. A manifest there records what was
fetched with which md5: a dataset whose files are present sends no request at all, not even a ``HEAD``.
A dataset that loads a Hugging Face hub id in no table is fetched into the hub cache at a pinned revision
(``data/hub_fetch.py``). ``run`` never downloads.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from promptweave.compat.data_ids import DATA_IDS
from promptweave.compat.data_urls import AISBENCH_ARCHIVES, ARCHIVES
from promptweave.data.archive import UnpackLimits, move_into, unpack
from promptweave.data.cache_places import AISBENCH_ENV, AISBENCH_PREFIX, COMPASS_DEFAULT, COMPASS_ENV
from promptweave.data.fetch_manifest import read_manifest, state_dir, write_entry
from promptweave.data.hub_fetch import HubRepo, config_revision, hub_id
from promptweave.errors import ChecksumError, DataFetchError

_CHUNK = 1 << 20


@dataclass
class Archive:
    """One archive to fetch and the datasets that need it."""

    key: str
    url: str
    md5: str | None
    root: Path  # the folder its members unpack into
    home: Path  # the data root: its download state lives in home/.promptweave-fetch
    needs: list[tuple[str, Path]] = field(default_factory=list)  # (dataset abbr, the path it reads)

    @property
    def name(self) -> str:
        return Path(urllib.parse.urlsplit(self.url).path).name or self.key.strip("/")


@dataclass
class FetchPlan:
    archives: list[Archive]
    present: list[tuple[str, Path]]  # datasets whose files are there already
    unknown: list[tuple[str, str, str]]  # (abbr, path, why no archive is known)
    hub: list[HubRepo] = field(default_factory=list)  # hub dataset repos (data/hub_fetch.py)


@dataclass
class Outcome:
    archive: Archive
    status: str  # "fetched" | "present"
    requests: int = 0


def compass_root(data_root: str | Path | None) -> Path:
    if data_root:
        return Path(data_root).expanduser()
    env = os.environ.get(COMPASS_ENV)
    return Path(env).expanduser() if env else COMPASS_DEFAULT.expanduser()


def aisbench_root(data_root: str | Path | None) -> Path:
    if data_root:
        return Path(data_root).expanduser()
    env = os.environ.get(AISBENCH_ENV)
    return Path(env).expanduser() if env else Path.cwd()


def read_md5_table(path: str | Path) -> dict[str, tuple[str, str]]:
    """Overrides in OpenCompass's format: ``{"/gsm8k/": {"url": "...", "md5": "..."}}``."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataFetchError(f"cannot read the md5 table: {exc.strerror or exc}", file=str(p)) from None
    except (ValueError, RecursionError) as exc:
        raise DataFetchError(f"the md5 table is not JSON: {exc}", file=str(p)) from None
    if not isinstance(data, dict):
        raise DataFetchError("the md5 table must be a JSON object of {key: {url, md5}}", file=str(p))
    out = {}
    for key, entry in data.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("url"), str) and isinstance(entry.get("md5"), str)
                and len(entry["md5"]) == 32 and all(c in "0123456789abcdefABCDEF" for c in entry["md5"])):
            raise DataFetchError("each entry needs a url and a 32-hex-digit md5", file=str(p), field=str(key),
                                 value=entry)
        out[str(key)] = (entry["url"], entry["md5"].lower())
    return out


def _with_mirror(url: str, mirror: str | None) -> str:
    if not mirror:
        return url
    m = urllib.parse.urlsplit(mirror)
    if m.scheme not in ("http", "https") or not m.netloc:
        raise DataFetchError("--mirror must be an http:// or https:// URL", field="--mirror", value=mirror)
    u = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((m.scheme, m.netloc, m.path.rstrip("/") + u.path, u.query, ""))


def _match(local: str, table: Mapping[str, tuple[str, str]]) -> str | None:
    """The table key OpenCompass picks for ``local``: the last one found inside it."""
    found = None
    for key in table:
        if key in local:
            found = key
    return found


def plan_fetch(datasets: Sequence[Mapping[str, Any]], abbrs: Sequence[str], *, data_root: str | Path | None = None,
               md5_table: Mapping[str, tuple[str, str]] | None = None, mirror: str | None = None,
               revisions: Mapping[str, str] | None = None) -> FetchPlan:
    """Which archives the datasets need, which are present already, and which have no known source; a dataset
    that loads a Hugging Face hub id (and is in no table) is a hub repo to fetch, pinned by ``revisions``
    (``--revision REPO=REV``), else the config's ``revision``."""
    table: dict[str, tuple[str, str]] = {**ARCHIVES, **(md5_table or {})}
    by_url: dict[str, Archive] = {}
    by_repo: dict[str, HubRepo] = {}
    present: list[tuple[str, Path]] = []
    unknown: list[tuple[str, str, str]] = []
    for ds, abbr in zip(datasets, abbrs, strict=True):
        path = ds.get("path")
        if not isinstance(path, str) or not path:
            continue
        if os.path.isabs(os.path.expanduser(path)):
            unknown.append((abbr, path, "an absolute path is the user's own data, not a reference archive"))
            continue
        if path.startswith(AISBENCH_PREFIX):
            root = aisbench_root(data_root)
            target = root / path
            sub = path[len("ais_bench/datasets/"):] if path.startswith("ais_bench/datasets/") else path
            key = _match(f"/{sub}/", table)
            if key is not None:
                url, md5 = table[key]
            elif path.split("/")[:3] and "/".join(path.split("/")[:3]) in AISBENCH_ARCHIVES:
                key = "/".join(path.split("/")[:3])
                url, md5 = AISBENCH_ARCHIVES[key], None
                for known_url, known_md5 in table.values():
                    if known_url == url:
                        md5 = known_md5
            else:
                unknown.append((abbr, path, "AISBench's documentation names no single archive for it"))
                continue
            unpack_root = root / "ais_bench" / "datasets"
        else:
            local = path if ds.get("local_mode") else DATA_IDS.get(path, path)
            root = compass_root(data_root)
            target = root / local
            key = _match(os.path.join(str(root), local), table)
            if key is None:
                repo_id = hub_id(ds)
                if repo_id is not None and not os.path.exists(os.path.expanduser(path)):
                    rev = (revisions or {}).get(repo_id) or config_revision(ds)
                    repo = by_repo.setdefault(f"{repo_id}@{rev}", HubRepo(repo_id, rev, root))
                    repo.needs.append(abbr)
                    continue
                unknown.append((abbr, path, "not in OpenCompass's download table"))
                continue
            url, md5 = table[key]
            unpack_root = root / "data"
        if target.exists():
            present.append((abbr, target))
            continue
        url = _with_mirror(url, mirror)
        arch = by_url.setdefault(url, Archive(key, url, md5, unpack_root, root))
        arch.needs.append((abbr, target))
    return FetchPlan(list(by_url.values()), present, unknown, list(by_repo.values()))


def known_archive(path: str, *, local_mode: bool = False) -> str | None:
    """The file name of the archive ``data fetch`` would get for a dataset ``path`` (None: no known source)."""
    try:
        plan = plan_fetch([{"path": path, "local_mode": local_mode}], ["_"], data_root=Path("/nonexistent-root"))
    except DataFetchError:
        return None
    return plan.archives[0].name if plan.archives else None


# -- the manifest (data/fetch_manifest.py) -------------------------------------------------------------------------
def _record(state: Path, arch: Archive, md5: str, entries: list[str]) -> None:
    write_entry(state, arch.name, {"url": arch.url, "md5": md5, "entries": entries, "into": str(arch.root),
                                   "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


# -- downloading -----------------------------------------------------------------------------------------------------
class Progress:
    """Bytes, rate and ETA on one line of ``stream`` (rewritten in place on a terminal, every few seconds else)."""

    def __init__(self, name: str, stream: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.name, self.stream, self.clock = name, stream if stream is not None else sys.stderr, clock
        self.start = self.last = clock()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, done: int, total: int | None, *, final: bool = False) -> None:
        now = self.clock()
        if not final and now - self.last < (0.2 if self.tty else 5.0):
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        size = f"{_mib(done)} / {_mib(total)}" if total else _mib(done)
        eta = f", ETA {max(0.0, (total - done) / rate):.0f} s" if total and rate > 0 and not final else ""
        line = f"{self.name}: {size} at {_mib(rate)}/s{eta}"
        self.stream.write(("\r" + line + ("\n" if final else "")) if self.tty else line + "\n")
        self.stream.flush()


def _mib(n: float | None) -> str:
    return f"{(n or 0) / (1 << 20):.1f} MiB"


def download(url: str, dest: Path, *, progress: Progress | None = None, timeout: float = 60.0,
             attempts: int = 3) -> int:
    """Fetch ``url`` into ``dest``, resuming a partial ``dest`` with ``Range``; returns the requests sent.

    A transfer cut short is resumed (up to ``attempts`` requests in all); a server that answers a range request
    with the whole body starts the file again. Still short after that: a typed error (the partial file is kept,
    so the next ``data fetch`` resumes it).
    """
    requests = 0
    last = ""
    for _ in range(attempts):
        have = dest.stat().st_size if dest.exists() else 0
        headers = {"User-Agent": "promptweave-data-fetch"}
        if have:
            headers["Range"] = f"bytes={have}-"
        requests += 1
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as resp:  # noqa: S310 - the table's or the user's mirror URL
                status = resp.status
                if status == 206:
                    mode, done = "ab", have
                    total = _total_from_range(resp.headers.get("Content-Range"), have)
                elif status == 200:
                    mode, done = "wb", 0
                    length = resp.headers.get("Content-Length")
                    total = int(length) if length and length.isdigit() else None
                else:
                    raise DataFetchError(f"{url} answered HTTP {status}", field="url", value=url)
                flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if mode == "ab" else os.O_TRUNC)
                with os.fdopen(os.open(dest, flags, 0o644), mode) as out:
                    while True:
                        block = resp.read(_CHUNK)
                        if not block:
                            break
                        out.write(block)
                        done += len(block)
                        if progress:
                            progress.update(done, total)
            if total is None or done >= total:
                if progress:
                    progress.update(done, total, final=True)
                return requests
            last = f"the transfer ended at {done} of {total} bytes"
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and have:  # the range is past the end: what we have is all there is, or junk
                dest.unlink()
                last = "the server refused to resume (HTTP 416)"
                continue
            raise DataFetchError(f"{url} answered HTTP {exc.code}: {exc.reason}", field="url", value=url) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            last = f"{type(exc).__name__}: {reason}"
            if isinstance(exc, urllib.error.URLError) and not dest.exists():
                raise DataFetchError(f"could not download {url}: {reason}", field="url", value=url,
                                     expected="a reachable server (--mirror URL for a mirror)") from None
    raise DataFetchError(f"could not download {url} in {attempts} requests: {last}; the partial file is kept and "
                         "the next 'data fetch' resumes it", field="url", value=url)


def _total_from_range(value: str | None, have: int) -> int | None:
    # "bytes 100-199/200"
    if value and "/" in value:
        tail = value.rsplit("/", 1)[1].strip()
        if tail.isdigit():
            return int(tail)
    return None


def md5_of(path: Path) -> str:
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def fetch_archive(arch: Archive, *, stream: Any = None, limits: UnpackLimits = UnpackLimits()) -> Outcome:
    """Download, verify and unpack one archive (see the module docstring)."""
    if arch.md5 is None:
        raise DataFetchError(f"no md5 is known for {arch.url}, so it cannot be verified",
                             field="md5", value=arch.key,
                             expected=f'--md5-table FILE with {{"{arch.key}": {{"url": ..., "md5": ...}}}}')
    state = state_dir(arch.home)
    known = read_manifest(state).get(arch.name)
    if isinstance(known, dict) and known.get("md5") == arch.md5 and all(p.exists() for _, p in arch.needs):
        return Outcome(arch, "present")
    part = state / f"{arch.name}.part"
    if part.is_symlink():
        part.unlink()
    requests = download(arch.url, part, progress=Progress(arch.name, stream))
    got = md5_of(part)
    if got != arch.md5:
        part.unlink()
        raise ChecksumError(f"{arch.name} from {arch.url} has md5 {got}, not the expected {arch.md5}; nothing was "
                            "unpacked", field="md5", value=got,
                            expected=f"{arch.md5} (for a private mirror, --md5-table FILE with its own md5)")
    staged = state / f"unpack-{os.getpid()}-{arch.name}"
    if staged.exists():
        shutil.rmtree(staged)
    try:
        entries = unpack(part, staged, limits)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        part.unlink(missing_ok=True)
        raise
    move_into(staged, arch.root)
    part.unlink(missing_ok=True)
    _record(state, arch, got, entries)
    return Outcome(arch, "fetched", requests)


def fetch(plan: FetchPlan, *, stream: Any = None, limits: UnpackLimits = UnpackLimits()) -> list[Outcome]:
    return [fetch_archive(a, stream=stream, limits=limits) for a in plan.archives]


def fetch_command(config: str | Path) -> str:
    """The command that fetches a config's data, as errors quote it."""
    return f"promptweave data fetch {config}"
