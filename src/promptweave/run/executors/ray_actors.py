"""The Ray actors of a run, as plain classes (``ray.remote`` is applied by the executor).

* :class:`CacheStore` — the one writer of the response cache (SQLite on the driver's
  node). Workers look answers up and store each finished call through it as it
  arrives, so a worker killed mid-shard loses no answered call.
* :class:`ClusterLimiter` — one per API model: its concurrency and request rate,
  applied to the whole cluster, not per actor.
* :class:`ShardWorker` — one per model replica: loads the model once, then builds and
  runs the prompts of any shard of any dataset for that model.
"""
from __future__ import annotations

import asyncio
import time
from typing import Any, Iterable

from promptweave.run.executors.shards import Shard


class CacheStore:
    """The response cache, served to workers (a threaded actor pinned to the driver's node)."""

    def __init__(self, path: str) -> None:
        from promptweave.infer.cache import ResponseCache

        self.cache = ResponseCache(path)

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        return self.cache.get_many(keys)

    def put_many(self, rows: list[tuple]) -> int:
        self.cache.put_many(rows)  # committed (WAL) before the caller is answered
        return len(rows)

    def size(self) -> int:
        return len(self.cache)


class RemoteCache:
    """ResponseCache's interface on a worker, backed by the :class:`CacheStore` actor."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        import ray

        keys = list(keys)
        return ray.get(self.store.get_many.remote(keys)) if keys else {}

    def get(self, key: str) -> Any:
        return self.get_many([key]).get(key)

    def put_many(self, items: Iterable[tuple]) -> None:
        import ray

        rows = [tuple(x) for x in items]
        if rows:
            ray.get(self.store.put_many.remote(rows))  # durable before the call counts as finished


class ClusterLimiter:
    """An API model's concurrency and requests-per-minute, shared by all its actors (an async actor).

    Slots are held per worker, so the driver can hand back the slots of a worker that
    died mid-request (:meth:`forget`) instead of shrinking the model's concurrency.
    """

    def __init__(self, concurrency: int, rpm: float | None) -> None:
        self.sem = asyncio.Semaphore(max(1, int(concurrency)))
        self.interval = 60.0 / rpm if rpm else 0.0
        self.next = 0.0
        self.lock = asyncio.Lock()
        self.held: dict[str, int] = {}
        self.peak = 0

    async def acquire(self, owner: str) -> None:
        await self.sem.acquire()
        self.held[owner] = self.held.get(owner, 0) + 1
        self.peak = max(self.peak, sum(self.held.values()))
        if self.interval:
            async with self.lock:
                now = time.monotonic()
                wait = self.next - now
                self.next = max(now, self.next) + self.interval
            if wait > 0:
                await asyncio.sleep(wait)

    async def release(self, owner: str) -> None:
        if self.held.get(owner, 0) > 0:
            self.held[owner] -= 1
            self.sem.release()

    async def forget(self, owner: str) -> int:
        n = self.held.pop(owner, 0)
        for _ in range(n):
            self.sem.release()
        return n

    async def stats(self) -> dict[str, int]:
        return {"in_use": sum(self.held.values()), "peak": self.peak}


def _limit_calls(model: Any, limiter: Any, owner: str) -> None:
    """Route each request of an OpenAI-compatible model through the cluster-wide limiter."""
    import ray

    inner = model._call  # each logical request (with its retries) is one ``_call``

    async def limited(*args: Any, **kw: Any) -> Any:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, ray.get, limiter.acquire.remote(owner))
        try:
            return await inner(*args, **kw)
        finally:
            limiter.release.remote(owner)

    model._call = limited
    model.rpm = None  # the cluster limiter spaces requests; a per-actor limit would multiply it


class ShardWorker:
    """One model replica: the model is loaded once; shards of every dataset for it are fed in."""

    def __init__(self, config: Any, model_index: int, *, allow_code: bool, limit: int | None, store: Any,
                 limiter: Any = None, name: str = "") -> None:
        from promptweave.models.factory import build_model

        self.config = config
        self.j = model_index
        self.allow_code = allow_code
        self.limit = limit
        self.cache = RemoteCache(store)
        self.model = build_model(config.models[model_index])
        if limiter is not None and hasattr(self.model, "_call"):
            _limit_calls(self.model, limiter, name)
        self.datasets: dict[int, Any] = {}
        self.counters: dict[int, Any] = {}
        self.shards_run = 0

    def ready(self) -> dict[str, Any]:
        import os

        return {"pid": os.getpid(), "model": type(self.model).__name__}

    def _count(self, mcfg: Any) -> Any:
        from promptweave.models.factory import load_token_counter

        if self.j not in self.counters:
            self.counters[self.j] = load_token_counter(mcfg)
        return self.counters[self.j]

    def run_shard(self, shard: Shard, ds_ref: list) -> dict[str, Any]:
        """Build the shard's prompts here (from the shared dataset) and run them through the cache."""
        import ray

        from promptweave.run.execute import infer_rows
        from promptweave.run.plan import plan_config

        if shard.ds not in self.datasets:  # fetched from the object store once per worker
            self.datasets[shard.ds] = ray.get(ds_ref[0])
        (task,) = plan_config(self.config, limit=self.limit, allow_code=self.allow_code, datasets=[shard.ds],
                              models=[self.j], make_model=lambda _cfg: self.model, token_counter=self._count,
                              rows=range(shard.start, shard.stop), opened={shard.ds: self.datasets[shard.ds]})
        stats = getattr(self.model, "stats", None)
        ok0, cut0 = getattr(stats, "ok", None), getattr(stats, "truncated_prompts", None)
        rows, meta = infer_rows(task, self.model, self.cache)
        self.shards_run += 1
        return {"rows": rows, "meta": meta, "requests": len(task.records),
                "sent": None if ok0 is None else stats.ok - ok0,
                "truncated": 0 if cut0 is None else stats.truncated_prompts - cut0}

    def loads(self) -> int:
        return self.shards_run


class AsyncShardWorker(ShardWorker):
    """An API model's replica as an async actor: a shard runs in a thread, the actor stays responsive."""

    async def ready(self) -> dict[str, Any]:  # type: ignore[override]
        return ShardWorker.ready(self)

    async def run_shard(self, shard: Shard, ds_ref: list) -> dict[str, Any]:  # type: ignore[override]
        return await asyncio.to_thread(ShardWorker.run_shard, self, shard, ds_ref)

    async def loads(self) -> int:  # type: ignore[override]
        return self.shards_run
