"""Shard planning and the shard log (no Ray needed)."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from promptweave.run.executors.shards import (
    ShardLog,
    auto_shard_rows,
    gaps,
    rows_per_batch,
    split,
)


@given(st.integers(0, 500), st.lists(st.tuples(st.integers(0, 500), st.integers(1, 60)), max_size=8),
       st.integers(1, 50))
def test_gaps_and_split_cover_the_rest_exactly_once(n, done_raw, size) -> None:
    done, at = [], 0
    for a, length in sorted(done_raw):  # disjoint committed ranges, as ShardLog.done returns
        a = max(a, at)
        if a + length <= n:
            done.append((a, a + length))
            at = a + length
    todo = split(gaps(done, n), size)
    covered = sorted([r for a, b in done for r in range(a, b)] + [r for a, b in todo for r in range(a, b)])
    assert covered == list(range(n))
    assert all(0 < b - a <= size for a, b in todo)


@given(st.integers(1, 10**7), st.integers(1, 256), st.integers(1, 2000), st.integers(1, 8))
def test_auto_shard_is_whole_batches(n, bs, replicas, per_row) -> None:
    unit = rows_per_batch(bs, per_row)
    size = auto_shard_rows(n, bs, replicas, rows_per_batch=unit)
    assert size % unit == 0 and size >= unit
    assert size <= unit * max(64, -(-replicas // 200))


def test_shard_log_keeps_a_disjoint_cover_and_ignores_rows_past_the_limit(tmp_path) -> None:
    log = ShardLog(tmp_path / "t")
    for a, b in ((0, 4), (4, 8), (0, 8), (8, 12), (12, 20)):
        log.commit(a, b, {"rows": list(range(a, b))})
    assert log.done(12) == [(0, 8), (8, 12)]
    assert log.read(8, 12)["rows"] == [8, 9, 10, 11]
    assert not list((tmp_path / "t").glob("*.tmp"))
