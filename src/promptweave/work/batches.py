"""A task's records in bounded batches: what every form's rows are built, sent and written by."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from promptweave.work.task import LazyRecords

ROWS_PER_BATCH = 4096
"""Rows built, sent and written per batch: bounds a task's memory; large enough that the API
concurrency stays busy (a batch's slowest request holds the next batch back only once)."""


def batches(records: Sequence[Any] | LazyRecords, rows_per_batch: int) -> Iterator[Sequence[Any]]:
    """Records in batches of at most ``rows_per_batch`` rows; a row's records (PPL labels) stay together."""
    if isinstance(records, LazyRecords):  # perf: the builder's own chunks, with their prompt lists
        yield from records.batches(rows_per_batch)
        return
    batch: list[Any] = []
    seen = 0
    last = object()
    for r in records:
        if r.index != last:
            if seen == rows_per_batch:
                yield batch
                batch, seen = [], 0
            seen += 1
            last = r.index
        batch.append(r)
    if batch:
        yield batch
