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


def test_a_shared_dataset_builds_a_local_runs_prompts_after_the_driver_built_from_it(tmp_path) -> None:
    """The driver builds row 0 (plan-time checks) on the dataset it then ships; a worker's copy must build the
    same prompts as a local plan, in-context examples included (no Ray needed: the object store pickles)."""
    import pickle
    import shutil
    from pathlib import Path

    from promptweave.config import load_config, open_dataset
    from promptweave.run.executors.shared import with_shared_index
    from promptweave.run.plan import plan_config

    examples = Path(__file__).resolve().parents[2] / "examples"
    shutil.copytree(examples / "data", tmp_path / "data")
    shutil.copy(examples / "run_openai_server.py", tmp_path / "cfg.py")
    cfg = load_config(tmp_path / "cfg.py")
    i = 1  # arithmetic: three fixed in-context examples
    (local,) = plan_config(cfg, datasets=[i], rows=range(0, 6))
    shared = with_shared_index(open_dataset(cfg, i))
    plan_config(cfg, datasets=[i], rows=range(0, 1), opened={i: shared})  # what the driver does
    (worker,) = plan_config(cfg, datasets=[i], rows=range(0, 6), opened={i: pickle.loads(pickle.dumps(shared))})
    built = [r.rendered for r in worker.records]
    assert built == [r.rendered for r in local.records]
    assert len(built[0]) == 7  # three examples (question, answer) and the row's question


def test_the_coordinator_leases_nothing_once_the_driver_process_is_gone(tmp_path) -> None:
    """After a kill -9 of the driver its workers live on briefly: they must not be let start new requests."""
    import asyncio
    import subprocess
    import sys

    import pytest

    from promptweave.errors import DistributedError
    from promptweave.run.executors.ray_actors import Coordinator, process_start

    driver = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        coord = Coordinator(str(tmp_path / "cache.sqlite"), {0: (2, None)}, (driver.pid, process_start(driver.pid)))
        assert asyncio.run(coord.lease(0, "w", 1)) == (1, None)
    finally:
        driver.kill()
        driver.wait()
        driver.stdin.close()  # else its pipe is left to the garbage collector (a ResourceWarning)
    with pytest.raises(DistributedError, match="driver of this run is gone"):
        asyncio.run(coord.lease(0, "w", 1))
    assert asyncio.run(coord.limiter_stats(0))["in_use"] == 1  # the refused lease took no slot
