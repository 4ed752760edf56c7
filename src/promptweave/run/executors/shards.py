"""Row shards of a dataset × model task, and their commit log in the work dir.

A shard is a half-open row range ``[start, stop)`` of one task. Its file under
``<workdir>/shards/<model>/<dataset>-<fingerprint>/`` is written to a temporary
name and renamed into place only after every model answer it used is already in
the response cache, so a shard file on disk means "done": a rerun skips it, and a
rerun after a crash finds every answered call in the cache. The fingerprint hashes
the dataset and model configs, so an edited config never reuses stale shards.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptweave.safe_files import atomic_writer, read_regular

MAX_SHARD_BYTES = 4_000_000_000

SHARDS_DIR = "shards"
_NAME = re.compile(r"^(\d+)-(\d+)\.json$")


@dataclass(frozen=True)
class Shard:
    """Rows ``[start, stop)`` of dataset ``ds`` (config index) on model ``model`` (config index)."""

    ds: int
    model: int
    start: int
    stop: int

    @property
    def rows(self) -> int:
        return self.stop - self.start


def auto_shard_rows(n_rows: int, batch_size: int, replicas: int, *, rows_per_batch: int | None = None,
                    per_replica: int = 4, max_batches: int = 64, replicas_per_batch: int = 200) -> int:
    """A shard size from the model's batch size and how many replicas share the work.

    At least one full batch (a smaller shard wastes the model's batching); about
    ``per_replica`` shards per replica so a slow or lost replica leaves work others
    can take; at most ``max_batches`` batches, so a lost shard costs little to redo;
    and one more batch per ``replicas_per_batch`` replicas, because every shard is
    committed by the one driver (benchmarks/scale_sim.py: at 800 replicas one-batch
    shards keep the driver 100% busy and the run 4× slower than ideal).
    The size is a whole number of batches (``rows_per_batch`` rows each: fewer than
    ``batch_size`` when a row makes several requests, as PPL labels do), so a local
    model sees the same batches as in a local run and its float outputs match bit for bit.
    """
    bs = max(1, int(batch_size))
    unit = max(1, int(rows_per_batch or bs))
    even = math.ceil(max(1, n_rows) / (max(1, replicas) * per_replica))
    floor = unit * max(1, math.ceil(max(1, replicas) / replicas_per_batch))
    size = max(floor, min(even, unit * max_batches))
    return math.ceil(size / unit) * unit


def rows_per_batch(batch_size: int, requests_per_row: int) -> int:
    """Rows in one model batch when each row makes ``requests_per_row`` requests (batches fill to ``batch_size``)."""
    return max(1, math.ceil(max(1, batch_size) / max(1, requests_per_row)))


def split(ranges: Iterable[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in ranges:
        out.extend((s, min(s + size, b)) for s in range(a, b, size))
    return out


def gaps(done: Iterable[tuple[int, int]], n_rows: int) -> list[tuple[int, int]]:
    """The row ranges of ``[0, n_rows)`` no done shard covers."""
    out, at = [], 0
    for a, b in sorted(done):
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if at < n_rows:
        out.append((at, n_rows))
    return out


def fingerprint(dataset_cfg: Mapping[str, Any], model_cfg: Mapping[str, Any], allow_code: bool) -> str:
    text = json.dumps([dataset_cfg, model_cfg, allow_code], sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


class ShardLog:
    """The committed shards of one task."""

    def __init__(self, folder: Path, root: Path | None = None) -> None:
        self.folder = folder
        self.root = root if root is not None else folder.parent  # the work dir: no link below it is followed

    def path(self, start: int, stop: int) -> Path:
        return self.folder / f"{start}-{stop}.json"

    def done(self, n_rows: int) -> list[tuple[int, int]]:
        """Committed, non-overlapping ranges inside ``[0, n_rows)`` (a shard past a lowered --limit is ignored)."""
        if not self.folder.is_dir():
            return []
        found = []
        for p in self.folder.iterdir():
            m = _NAME.match(p.name)
            if m and int(m.group(2)) <= n_rows:
                found.append((int(m.group(1)), int(m.group(2))))
        kept, at = [], 0
        for a, b in sorted(found, key=lambda r: (r[0], -r[1])):
            if a >= at:  # shards from runs with another --shard-rows may overlap: keep a disjoint cover
                kept.append((a, b))
                at = b
        return kept

    def retry_path(self, start: int, stop: int) -> Path:
        return self.folder / f"{start}-{stop}.retry.json"

    def commit(self, start: int, stop: int, payload: Mapping[str, Any], *, complete: bool = True) -> None:
        """Write a shard's rows atomically (temp file, fsync, rename).

        A shard with failed rows (``complete=False``) is written under a name :meth:`done`
        does not count: this run merges it, a rerun runs the shard again (its answered calls
        come from the cache, so only the failed rows are sent again), as a local rerun does.
        """
        final = self.path(start, stop) if complete else self.retry_path(start, stop)
        # an exclusively created temporary file beside it (never a planted link), synced, then renamed
        with atomic_writer(final, root=self.root, sync=True) as fh:
            json.dump(payload, fh, ensure_ascii=False, default=str)
        if complete:
            self.retry_path(start, stop).unlink(missing_ok=True)
        else:
            self.path(start, stop).unlink(missing_ok=True)

    def read(self, start: int, stop: int) -> dict[str, Any]:
        path = self.path(start, stop)
        if not path.exists():
            path = self.retry_path(start, stop)
        # confined to the work dir: a shard planted as a link out of it is not read
        return json.loads(read_regular(path, max_bytes=MAX_SHARD_BYTES, root=self.root).decode("utf-8"))
