"""``--executor ray`` for perf mode: one level's load from several client processes, merged into one run.

The level's requests are dealt round-robin to ``workers`` Ray tasks, each with its share of the concurrency (and,
when paced, its share of the send times); each builds the model from its config, waits for a common start time, and
drives its share with the same client as a local run. Each worker stamps requests with its own monotonic clock and
reports one (monotonic, wall) pair taken at the end, so the merged timeline is on the wall clock: exact on one
machine, as good as the hosts' clock agreement across machines. The results are merged (requests re-numbered in
start order, ITL stores joined) and summarised as one run with the level's whole concurrency as its maximum.
"""
from __future__ import annotations

import time
from typing import Any

from promptweave.errors import DistributedError, PerfConfigError
from promptweave.run.perf.client import LoadOutcome, PerfRequest
from promptweave.run.perf.itl_store import ItlStore, merge_stores

START_SLACK = 2.0  # seconds between handing out the work and the common start, for every worker to be ready


def _drive(mcfg: Any, requests: list[PerfRequest], concurrency: int, offsets: list[float] | None,
           start_wall: float) -> tuple[LoadOutcome, float, float]:
    """One worker's share (runs inside a Ray task)."""
    from promptweave.models.factory import build_model, load_token_counter
    from promptweave.models.openai_compat import run_sync
    from promptweave.run.perf.client import generate_load

    model = build_model(mcfg)
    model.served_model()
    counter = load_token_counter(mcfg)
    wait = start_wall - time.time()
    if wait > 0:
        time.sleep(wait)
    load = run_sync(generate_load(model, iter(requests), concurrency=concurrency, offsets=offsets, counter=counter))
    return load, time.perf_counter(), time.time()


def ray_load(mcfg: Any, requests: list[PerfRequest], *, concurrency: int, offsets: list[float] | None,
             workers: int, address: str | None = None) -> LoadOutcome:
    """The level's load from ``workers`` Ray tasks, merged."""
    if workers < 1 or workers > concurrency:
        raise PerfConfigError("--workers must be between 1 and the concurrency", field="--workers", value=workers)
    from promptweave.run.executors.ray_executor import RayExecutor

    ray = RayExecutor(address=address).connect()
    task = ray.remote(num_cpus=0)(_drive)
    start_wall = time.time() + START_SLACK
    shares = [concurrency // workers + (1 if w < concurrency % workers else 0) for w in range(workers)]
    refs = [task.remote(mcfg, requests[w::workers], shares[w],
                        None if offsets is None else offsets[w:len(requests):workers], start_wall)
            for w in range(workers)]
    try:
        got = ray.get(refs)
    except Exception as exc:  # noqa: BLE001 - a worker's error comes back wrapped by Ray
        raise DistributedError(f"a perf worker failed: {type(exc).__name__}: {str(exc).strip()[:300]}",
                               field="--executor", value="ray") from None
    return merge_loads(got, concurrency)


def merge_loads(parts: list[tuple[LoadOutcome, float, float]], concurrency: int) -> LoadOutcome:
    """Workers' outcomes on one wall-clock timeline, re-numbered in start order."""
    moved = []
    for w, (load, mono, wall) in enumerate(parts):
        shift = wall - mono
        for r in load.results:
            r.start += shift
            r.end += shift
            moved.append((r.start, w, r))
    moved.sort(key=lambda x: (x[0], x[1]))
    # in-flight counts on the merged timeline, so the steady-state ITL of histogram stores stays meaningful
    mappings: list[dict[int, int]] = [{} for _ in parts]
    results = []
    for new, (_, w, r) in enumerate(moved):
        mappings[w][r.index] = new
        r.index = new
        results.append(r)
    at_max = {r.index for r in results if r.in_flight * len(parts) >= concurrency}
    itl: ItlStore = merge_stores([(load.itl, mappings[w], at_max) for w, (load, _, _) in enumerate(parts)])
    starts = [r.start for r in results] or [0.0]
    ends = [r.end for r in results] or [0.0]
    return LoadOutcome(results, itl, min(starts), max(ends))
