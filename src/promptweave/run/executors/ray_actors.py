"""The Ray actors of a run, as plain classes (``ray.remote`` is applied by the executor).

* :class:`Coordinator` — the one writer of the response cache (SQLite on the driver's
  node; workers look answers up and store each finished call through it as it
  arrives, so a worker killed mid-shard loses no answered call), holding one
  :class:`ClusterLimiter` per API model: its concurrency and request rate, applied
  to the whole cluster, not per actor.
* :class:`ShardWorker` — one per model replica: loads the model once, then builds and
  runs the prompts of any shard of any dataset for that model.
"""
from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from promptweave.run.executors.shards import Shard


class Coordinator:
    """The run's one shared actor (async, pinned to the driver's node): the response cache and the limiters.

    It is the only writer of the response cache (SQLite in the driver's work dir):
    workers look answers up and store each finished call through it. It also holds
    one :class:`ClusterLimiter` per API model. One actor rather than several: each
    actor is a process to start.
    """

    def __init__(self, path: str, limits: dict[int, tuple[int, float | None]],
                 driver: tuple[int, str | None] | None = None) -> None:
        from promptweave.infer.cache import ResponseCache

        self.cache = ResponseCache(path)
        self.limiters = {j: ClusterLimiter(c, rpm) for j, (c, rpm) in limits.items()}
        # checked only where the driver's process is visible from here (same node and PID namespace)
        self.driver = driver if driver is not None and process_start(driver[0]) == driver[1] else None

    async def get_many(self, keys: list[str]) -> dict[str, Any]:
        return await asyncio.to_thread(self.cache.get_many, keys)

    async def put_many(self, rows: list[tuple]) -> int:
        await asyncio.to_thread(self.cache.put_many, rows)  # committed (WAL) before the caller is answered
        return len(rows)

    async def size(self) -> int:
        return len(self.cache)

    async def lease(self, model: int, owner: str, want: int) -> tuple[int, float | None]:
        # after a kill -9 of the driver, its workers live on until Ray notices (about a second): they must not
        # start new requests whose answers nobody is left to commit (answers already in flight are still stored)
        if self.driver is not None and process_start(self.driver[0]) != self.driver[1]:
            from promptweave.errors import DistributedError

            raise DistributedError("the driver of this run is gone: no new requests are sent; rerun the same "
                                   "command to resume", field="driver", value=self.driver[0])
        return await self.limiters[model].lease(owner, want)

    async def release(self, model: int, owner: str, n: int) -> None:
        await self.limiters[model].release(owner, n)

    async def forget(self, model: int, owner: str) -> int:
        return await self.limiters[model].forget(owner) if model in self.limiters else 0

    async def limiter_stats(self, model: int) -> dict[str, int]:
        return self.limiters[model].stats()


def process_start(pid: int) -> str | None:
    """A process's identity: its start time from ``/proc`` (so a reused pid is not taken for it); None if gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else fields[19]  # a zombie has exited already


class RemoteCache:
    """ResponseCache's interface on a worker, backed by the :class:`Coordinator` actor.

    Stored answers are handed to a writer thread that sends them to the store in
    group commits (one RPC carries every answer that arrived meanwhile), so the
    model's event loop never waits on the network; an answer is durable about one
    round trip after it arrives. :meth:`flush` waits until everything handed over
    is committed: a shard is returned only after it.
    """

    def __init__(self, store: Any) -> None:
        import threading

        self.store = store
        self.lock = threading.Condition()
        self.queued: list[tuple] = []
        self.sending: list[tuple] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._writer, name="pw-cache-writer", daemon=True)
        self.thread.start()

    def _writer(self) -> None:
        import ray

        while True:
            with self.lock:
                while not self.queued:
                    self.lock.wait()
                self.sending, self.queued = self.queued, []
            try:
                ray.get(self.store.put_many.remote(self.sending))
            except BaseException as exc:  # noqa: BLE001 - reported by the next flush
                self.error = exc
            with self.lock:
                self.sending = []
                self.lock.notify_all()

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        import ray

        keys = list(keys)
        if not keys:
            return {}
        with self.lock:  # answers not yet committed are answers all the same
            local = {k: resp for k, _m, _kind, _req, resp in (*self.sending, *self.queued)}
        found = ray.get(self.store.get_many.remote([k for k in keys if k not in local]))
        found.update({k: local[k] for k in keys if k in local})
        return found

    def get(self, key: str) -> Any:
        return self.get_many([key]).get(key)

    def put_many(self, items: Iterable[tuple]) -> None:
        rows = [tuple(x) for x in items]
        if rows:
            with self.lock:
                self.queued.extend(rows)
                self.lock.notify_all()

    def flush(self) -> None:
        """Block until every answer handed over is committed to the response cache."""
        with self.lock:
            while self.queued or self.sending:
                self.lock.wait()
        if self.error is not None:
            err, self.error = self.error, None
            raise err


class _Counted:
    """A shard's view of the worker's :class:`RemoteCache` that counts the answers it stores (``writes``,
    as ResponseCache counts them: the calls sent and answered)."""

    def __init__(self, cache: RemoteCache) -> None:
        self.cache = cache
        self.writes = 0

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        return self.cache.get_many(keys)

    def get(self, key: str) -> Any:
        return self.cache.get(key)

    def put_many(self, items: Iterable[tuple]) -> None:
        rows = [tuple(x) for x in items]
        self.writes += len(rows)
        self.cache.put_many(rows)

    def put(self, key: str, model_name: str, kind: str, request: Any, response: Any) -> None:
        self.put_many([(key, model_name, kind, request, response)])


class ClusterLimiter:
    """An API model's concurrency and requests-per-minute, shared by all its actors (held by the Coordinator).

    Workers lease concurrency slots per batch of requests (not per request, which
    would cost a round trip each) and get a matching share of the request rate;
    the driver hands back the slots of a worker that died (:meth:`forget`).
    """

    def __init__(self, concurrency: int, rpm: float | None) -> None:
        self.total = max(1, int(concurrency))
        self.free = self.total
        self.rpm = rpm
        self.cond = asyncio.Condition()
        self.held: dict[str, int] = {}
        self.dead: set[str] = set()
        self.peak = 0

    async def lease(self, owner: str, want: int) -> tuple[int, float | None]:
        async with self.cond:
            # a dead worker's lease requests can still be waiting here: they must never take slots
            await self.cond.wait_for(lambda: self.free > 0 or owner in self.dead)
            if owner in self.dead:
                return 0, None
            n = min(max(1, int(want)), self.free)
            self.free -= n
            self.held[owner] = self.held.get(owner, 0) + n
            self.peak = max(self.peak, self.total - self.free)
        return n, (self.rpm * n / self.total if self.rpm else None)

    async def release(self, owner: str, n: int) -> None:
        async with self.cond:
            n = min(n, self.held.get(owner, 0))
            self.held[owner] = self.held.get(owner, 0) - n
            self.free += n
            self.cond.notify_all()

    async def forget(self, owner: str) -> int:
        async with self.cond:
            self.dead.add(owner)
            n = self.held.pop(owner, 0)
            self.free += n
            self.cond.notify_all()
        return n

    def stats(self) -> dict[str, int]:
        return {"in_use": self.total - self.free, "peak": self.peak}


def _limit_batches(model: Any, coordinator: Any, j: int, owner: str) -> None:
    """Send each batch of an OpenAI-compatible model under a lease from the cluster-wide limiter."""
    import copy

    import ray

    want = int(getattr(model, "concurrency", 1))

    def run_batch(*args: Any, **kw: Any) -> Any:
        n, rpm = ray.get(coordinator.lease.remote(j, owner, want))
        try:  # shards of one actor may run at once: each batch runs on a view with its lease's limits
            view = copy.copy(model)
            view.concurrency, view.rpm = n, rpm
            return type(model).run_batch(view, *args, **kw)
        finally:
            ray.get(coordinator.release.remote(j, owner, n))

    model.run_batch = run_batch


class ShardWorker:
    """One model replica: the model is loaded once; shards of every dataset for it are fed in."""

    def __init__(self, config: Any, model_index: int, *, allow_code: bool, limit: int | None, store: Any,
                 limited: bool = False, name: str = "", env: Any = None) -> None:
        from promptweave.models.factory import build_model
        from promptweave.sandbox.env import env_policy

        self.config = config
        self.j = model_index
        self.allow_code = allow_code
        self.limit = limit
        self.cache = RemoteCache(store)
        # the driver's --allow-env list: a worker process starts with the default (nothing allowed)
        with env_policy(getattr(env, "allowed", ()), trusted=getattr(env, "trusted", False)):
            self.model = build_model(config.models[model_index])
        if limited and hasattr(self.model, "run_batch"):
            _limit_batches(self.model, store, model_index, name)
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
        cut0: int | None = getattr(stats, "truncated_prompts", None)
        cache = _Counted(self.cache)  # calls answered for this shard (shards of one actor may run at once)
        try:
            rows, meta = infer_rows(task, self.model, cache)
        finally:
            self.cache.flush()  # the shard's answers are committed before the shard comes back
        self.shards_run += 1
        # a failed row's request is not cached: the shard is committed as one to run again on a rerun
        return {"rows": rows, "meta": meta, "requests": len(task.records), "sent": cache.writes,
                "failed_rows": sum(1 for r in rows if "error" in r),
                "truncated": 0 if cut0 is None else getattr(stats, "truncated_prompts", cut0) - cut0}

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
