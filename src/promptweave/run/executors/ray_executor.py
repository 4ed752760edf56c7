"""The Ray executor: row shards of every task, run by long-lived model actors, committed shard by shard.

Flow (data moves one way): the driver opens each dataset once, runs its retriever
once and puts the dataset (rows + example ids) in the object store; it splits every
dataset × model task into row shards, skipping shards already committed in the
work dir; one actor per model replica loads the model once and is fed shards of
every dataset for that model; each shard's prompts are built on the actor from the
shared dataset and the config. Model answers go to the response cache as they
arrive (through :class:`~promptweave.run.executors.ray_actors.Coordinator`), the
shard's rows come back to the driver, which commits them atomically. When all of
a task's shards are in, the driver merges them in row order and scores the task
once, exactly as a local run does.

A worker that dies mid-shard has its shard sent to a fresh worker, up to
``max_retries`` times; then the shard, and so its task, is reported failed with the
reason while the rest of the run completes.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.errors import DistributedError, PromptweaveError
from promptweave.run.executors.base import RunRequest
from promptweave.run.executors.ray_actors import process_start
from promptweave.run.executors.shards import (
    SHARDS_DIR,
    Shard,
    ShardLog,
    auto_shard_rows,
    fingerprint,
    gaps,
    rows_per_batch,
    split,
)
from promptweave.work.task import Task, TaskOutcome

NAMESPACE = "promptweave"
PIPELINE = 2  # shards queued per actor, so an actor never idles while the driver commits


@dataclass
class _TaskState:
    task: Task  # planned without records: name, mode, evaluation
    ds: int
    model: int
    n_rows: int
    log: ShardLog
    done: list[tuple[int, int]]
    pending: list[Shard] = field(default_factory=list)
    in_flight: int = 0
    failed: list[str] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)  # first row of a shard → its model/data error
    rows_done: int = 0
    bar: Any = None
    finished: bool = False
    per_row: int = 1  # requests per row (PPL: one per label), for batch-aligned shards


@dataclass
class _Planned:
    """A dataset as the driver checked it: shared with its retrieval done, and its tasks with row 0 built."""

    ds: int
    shared: Any
    n_rows: int
    tasks: list[tuple[int, Task]]  # (model index, task)
    per_row: int  # requests per row


@dataclass
class _Slot:
    """One model replica: the actor now serving it and how many times it was replaced."""

    model: int
    index: int
    actor: Any = None
    ready: bool = False
    busy: int = 0
    generation: int = 0


def _resources(mcfg: Any, api: bool, num_cpus: float | None, num_gpus: float | None) -> tuple[float, float]:
    from promptweave.models.factory import cfg_get

    run_cfg = cfg_get(mcfg, "run_cfg") or {}
    gpus = num_gpus if num_gpus is not None else float(run_cfg.get("num_gpus", 0) or 0)
    cpus = num_cpus if num_cpus is not None else float(run_cfg.get("num_cpus", 0 if api else 1) or 0)
    if api and num_cpus is None:
        cpus = 0.0  # an API model's actor waits on the network; it should not hold a core
    return cpus, gpus


class RayExecutor:
    """Scale a run out on Ray (``--executor ray``); see the module docstring."""

    name = "ray"

    def __init__(self, *, address: str | None = None, shard_rows: int | None = None, workers: int | None = None,
                 num_cpus: float | None = None, num_gpus: float | None = None, local_cpus: int | None = None,
                 max_retries: int = 3) -> None:
        if shard_rows is not None and shard_rows < 1:
            raise DistributedError("shard size must be at least 1 row", field="--shard-rows", value=shard_rows)
        if workers is not None and workers < 1:
            raise DistributedError("at least one worker per model is needed", field="--workers", value=workers)
        self.address = address
        self.shard_rows = shard_rows
        self.workers = workers
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.local_cpus = local_cpus
        self.max_retries = max_retries
        self.started = False
        self.coordinator: Any = None
        self.replaced = 0  # workers started in place of one that died
        self.spawned = 0  # model actors started (each loads its model once, then serves many shards)
        self.shards_run = 0
        self.startup_s: float | None = None  # from the start of the run until the first model worker was ready
        self.t0 = 0.0

    # ------------------------------------------------------------------ cluster
    def connect(self) -> Any:
        """The ``ray`` module, connected (``--address``) or with a local instance started, as a run connects."""
        return self._connect()

    def _connect(self) -> Any:
        try:
            import ray
        except ImportError:
            raise DistributedError("--executor ray needs Ray: pip install 'promptweave[ray]'",
                                   field="--executor", value="ray") from None
        if ray.is_initialized():
            return ray
        import logging

        from promptweave.run.executors.ray_preflight import check_local_start, start_failure

        if self.address:
            self._reachable(self.address)
        else:
            check_local_start()  # too little memory: refused now, not after Ray's startup timeout
        try:
            if self.address:
                ray.init(address=self.address, namespace=NAMESPACE, logging_level=logging.WARNING,
                         log_to_driver=False)
            else:  # a fresh local instance on loopback, never an existing cluster found by chance
                ray.init(address="local", num_cpus=self.local_cpus, include_dashboard=False, namespace=NAMESPACE,
                         _node_ip_address="127.0.0.1", logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            if not self.address:
                ray.shutdown()  # whatever half-started goes down with the run
                raise start_failure(exc, None) from None
            hint = "check the address (ray start --head prints it)"
            if self.address and os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
                # Ray turns token auth on for a cluster found on this machine, never for an explicit address
                hint += ("; a cluster started with token authentication (ray start's default) also needs "
                         "RAY_AUTH_MODE=token, with the token in ~/.ray/auth_token, RAY_AUTH_TOKEN or "
                         "RAY_AUTH_TOKEN_PATH")
            raise DistributedError(f"could not {'join the Ray cluster' if self.address else 'start Ray'}: "
                                   f"{str(exc).strip()}; {hint}", field="--address", value=self.address) from None
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception when its processes do not come up
            ray.shutdown()
            raise start_failure(exc, self.address) from None
        self.started = True
        return ray

    @staticmethod
    def _reachable(address: str) -> None:
        """Refuse at once when no Ray head answers at a ``host:port`` address (Ray itself would wait for minutes)."""
        from promptweave.run.executors.ray_preflight import probe_address

        probe_address(address)

    # ------------------------------------------------------------------ plan
    def _check(self, req: RunRequest) -> list[_Planned]:
        """Open each dataset once, run its retriever once, and build row 0 of every task, as a local plan
        would: a config error is refused here, with the local run's typed error, before Ray starts or the
        work dir is touched."""
        from promptweave.engine.open import open_dataset
        from promptweave.forms.registry import form_for
        from promptweave.run.executors.shared import with_shared_index
        from promptweave.run.plan import infer_mode, plan_config

        cfg = req.config
        ds_ids = list(req.datasets) if req.datasets is not None else list(range(len(cfg.datasets)))
        model_ids = list(req.models) if req.models is not None else list(range(len(cfg.models)))
        planned = []
        from promptweave.config.pairs import allowed_pairs

        allowed, every_model = allowed_pairs(cfg), model_ids
        for i in ds_ids:
            model_ids = [j for j in every_model if allowed is None or (i, j) in allowed]  # model_dataset_combinations
            if not model_ids:
                continue
            ds = open_dataset(cfg, i)
            form = form_for(infer_mode(ds.inferencer.type, where=f"datasets[{i}].infer_cfg.inferencer.type",
                                       settings=ds.inferencer.settings, file=str(cfg.path)))
            shared = with_shared_index(ds) if form.shared_index else ds
            n = len(ds.test) if req.limit is None else min(req.limit, len(ds.test))
            # tasks with row 0 built (names, modes and evaluations for merging and scoring on the driver);
            # the worker's copy of the dataset comes out of the object store with its own caches
            skeletons = plan_config(cfg, limit=req.limit, allow_code=req.allow_code, datasets=[i], models=model_ids,
                                    rows=range(0, 1), opened={i: shared})
            if req.prepare is not None:  # evaluator checks (code flag, judge) before anything is sent
                req.prepare(skeletons)
            labels = 1
            if form.labels_per_row:
                from promptweave.engine import PromptBuilder
                from promptweave.engine.open import open_model

                labels = len(PromptBuilder(shared, open_model(cfg, model_ids[0]), form.build_mode).labels()) or 1
            planned.append(_Planned(i, shared, n, list(zip(model_ids, skeletons)), labels))
        return planned

    def _plan(self, req: RunRequest, ray: Any, planned: list[_Planned]) -> tuple[list[_TaskState], dict[int, Any]]:
        from promptweave.run.executors.shared import in_blocks
        from promptweave.work.output import safe_name

        cfg = req.config
        states: list[_TaskState] = []
        ds_refs: dict[int, Any] = {}
        for p in planned:
            # test rows in blocks: a node fetches the rows it runs, not every dataset whole
            ds_refs[p.ds] = ray.put(in_blocks(p.shared, ray.put, max(256, self.shard_rows or 0)))
            for j, task in p.tasks:
                folder = (Path(req.workdir) / SHARDS_DIR / safe_name(task.model_name)
                          / f"{safe_name(task.dataset)}-{fingerprint(cfg.datasets[p.ds], cfg.models[j], req.allow_code)}")
                log = ShardLog(folder, Path(req.workdir))
                done = log.done(p.n_rows)
                states.append(_TaskState(task, p.ds, j, p.n_rows, log, done, rows_done=sum(b - a for a, b in done),
                                         per_row=p.per_row))
        return states, ds_refs

    def _replicas(self, mcfg: Any, api: bool, gpus: float, ray: Any) -> int:
        if self.workers is not None:
            return self.workers
        if gpus > 0:
            return max(1, int(ray.cluster_resources().get("GPU", 0) // gpus))
        return 1

    # ------------------------------------------------------------------ run
    def run(self, req: RunRequest) -> list[TaskOutcome]:
        from promptweave.infer.failure import ON_ROW_ERROR
        from promptweave.run.lock import workdir_lock

        if req.on_row_error not in ON_ROW_ERROR:
            raise DistributedError("unknown --on-row-error", field="on_row_error", value=req.on_row_error,
                                   expected=" / ".join(ON_ROW_ERROR))
        workdir = Path(req.workdir)
        planned = self._check(req)
        # one writer per work dir, as a local run: held (by this driver) from before Ray starts until it is down
        with workdir_lock(workdir, wait=req.wait, notify=req.notify):
            return self._run_locked(req, workdir, planned)

    def _run_locked(self, req: RunRequest, workdir: Path, planned: list[_Planned]) -> list[TaskOutcome]:
        from promptweave.models.factory import (
            OPENAI_TYPES,
            build_model,
            cfg_get,
            type_name,
        )
        from promptweave.sandbox.env import current_policy
        from promptweave.work.output import write_atomic

        self.t0 = time.monotonic()
        self.cache_file = Path(req.cache_path or workdir / "cache.sqlite")  # one cache for variants
        ray = self._connect()
        try:
            states, ds_refs = self._plan(req, ray, planned)
            cfg = req.config
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()
            limits = {}
            for j in sorted({s.model for s in states}):
                if type_name(cfg.models[j]) in OPENAI_TYPES:
                    probe = build_model(cfg.models[j])  # cheap for an HTTP model: reads its limits, sends nothing
                    limits[j] = (getattr(probe, "concurrency", 16), getattr(probe, "rpm", None))
            store = ray.remote(num_cpus=0)(_actor("Coordinator")).options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(
                str(self.cache_file), limits, (os.getpid(), process_start(os.getpid())))
            self.coordinator = store
            cfg_ref = ray.put(cfg)
            models = sorted({s.model for s in states})
            slots: dict[int, list[_Slot]] = {}
            makers: dict[int, Any] = {}
            cluster = ray.cluster_resources()
            for j in models:
                mcfg = cfg.models[j]
                api = type_name(mcfg) in OPENAI_TYPES
                cpus, gpus = _resources(mcfg, api, self.num_cpus, self.num_gpus)
                mine = [s for s in states if s.model == j]
                if gpus > cluster.get("GPU", 0) or cpus > cluster.get("CPU", 0):
                    why = (f"model {mine[0].task.model_name} asks for {gpus:g} GPU(s) and {cpus:g} CPU(s) per "
                           f"replica but the Ray cluster has {cluster.get('GPU', 0):g} GPU(s) and "
                           f"{cluster.get('CPU', 0):g} CPU(s); set run_cfg (or --num-gpus / --num-cpus) to fit")
                    for s in mine:
                        s.failed.append(why)
                    continue
                replicas = self._replicas(mcfg, api, gpus, ray)
                bs = int(cfg_get(mcfg, "batch_size") or (16 if api else 8))  # the factory's defaults
                for s in mine:
                    size = self.shard_rows or auto_shard_rows(s.n_rows, bs, replicas,
                                                              rows_per_batch=rows_per_batch(bs, s.per_row))
                    s.pending = [Shard(s.ds, j, a, b) for a, b in split(gaps(s.done, s.n_rows), size)]
                if not any(s.pending for s in mine):
                    continue
                cls = _actor("AsyncShardWorker" if api else "ShardWorker")
                opts = {"num_cpus": cpus, "num_gpus": gpus, "max_restarts": 0, "max_task_retries": 0}
                if api:
                    opts["max_concurrency"] = PIPELINE + 2
                remote_cls = ray.remote(**opts)(cls)
                makers[j] = (lambda k, gen, rc=remote_cls, j=j, api=api, name=mine[0].task.model_name:
                             rc.options(name=worker_name(name, k, gen), namespace=NAMESPACE).remote(
                                 cfg_ref, j, allow_code=req.allow_code, limit=req.limit, store=store,
                                 limited=api, name=worker_name(name, k, gen), env=current_policy()))
                slots[j] = [_Slot(j, k) for k in range(replicas)]
            return self._loop(req, ray, states, ds_refs, slots, makers, workdir, write_atomic)
        finally:
            if self.started:
                ray.shutdown()

    def _loop(self, req: RunRequest, ray: Any, states: list[_TaskState], ds_refs: dict[int, Any],
              slots: dict[int, list[_Slot]], makers: dict[int, Any], workdir: Path, write: Any) -> list[TaskOutcome]:
        from ray.exceptions import RayError, RayTaskError
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        by_task = {(s.ds, s.model): s for s in states}
        waits: dict[Any, tuple[str, _Slot, Any]] = {}  # the shard, None for a "ready" wait
        outcomes: dict[tuple[int, int], TaskOutcome] = {}
        attempts: dict[Shard, int] = {}
        start = time.monotonic()
        failures = 0

        def spawn(slot: _Slot) -> None:
            slot.actor = makers[slot.model](slot.index, slot.generation)
            self.spawned += 1
            slot.ready, slot.busy = False, 0
            waits[slot.actor.ready.remote()] = ("ready", slot, None)

        def retire(slot: _Slot) -> None:
            if slot.actor is not None:
                ray.kill(slot.actor)
                slot.actor = None

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[rate]}"), TextColumn("{task.fields[note]}"), TimeElapsedColumn(),
                      console=req.console, disable=not req.show_progress, transient=False) as bar:
            overall = bar.add_task("[bold]all tasks (rows)", total=sum(s.n_rows for s in states),
                                   completed=sum(s.rows_done for s in states), rate="", note="")
            for s in states:
                s.bar = bar.add_task(f"{s.task.model_name} · {s.task.dataset}", total=s.n_rows,
                                     completed=s.rows_done, rate="", note="")
            for model_slots in slots.values():
                for slot in model_slots:
                    spawn(slot)

            def finish_ready() -> None:
                for s in states:
                    if not s.finished and not s.pending and not s.in_flight:
                        outcomes[(s.ds, s.model)] = self._finish(s, workdir, req.on_row_error)
                        s.finished = True
                        bar.update(s.bar, note="[red]failed[/red]" if s.failed or s.errors else "[green]done[/green]")
                for j, model_slots in slots.items():  # a model with nothing left frees its GPUs for the next
                    if all(s.finished for s in states if s.model == j):
                        for slot in model_slots:
                            retire(slot)

            def feed(slot: _Slot) -> None:
                while slot.ready and slot.busy < PIPELINE:
                    todo = [s for s in states if s.model == slot.model and s.pending]
                    if not todo:
                        return
                    s = todo[0]
                    shard = s.pending.pop(0)
                    s.in_flight += 1
                    slot.busy += 1
                    waits[slot.actor.run_shard.remote(shard, [ds_refs[shard.ds]])] = ("shard", slot, shard)

            finish_ready()
            while waits:
                ready, _ = ray.wait(list(waits), num_returns=1, timeout=0.5)
                elapsed = max(time.monotonic() - start, 1e-9)
                for ref in ready:
                    what, slot, shard = waits.pop(ref)
                    try:
                        value = ray.get(ref)
                    except RayTaskError as exc:
                        msg = _cause_text(exc)
                        if what == "ready":  # the model could not be built: its tasks fail, as locally
                            for s in states:
                                if s.model == slot.model and s.pending:
                                    s.failed.append(msg)
                                    s.pending = []
                            retire(slot)
                        else:  # a model or data error stops this task only, as locally; no retry repeats it
                            s = by_task[(shard.ds, shard.model)]
                            s.in_flight -= 1
                            slot.busy -= 1
                            s.errors[shard.start] = msg
                            s.pending = []
                            bar.update(s.bar, note="[red]failed[/red]")
                        finish_ready()
                        if slot.actor is not None:
                            feed(slot)
                        continue
                    except RayError as exc:  # the worker or its node is gone: its shards go to a fresh one
                        if slot.actor is None:
                            continue
                        failures += 1
                        self._lost(slot, shard, exc, by_task, attempts, waits)
                        if slot.generation < self.max_retries + 1:
                            slot.generation += 1
                            self.replaced += 1
                            spawn(slot)
                        else:
                            slot.actor = None
                            self._abandon(slot, slots, by_task, f"the workers for this model kept dying "
                                          f"(last: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r})")
                        finish_ready()
                        continue
                    if what == "ready":
                        slot.ready = True
                        if self.startup_s is None:
                            self.startup_s = time.monotonic() - self.t0
                    else:
                        s = by_task[(shard.ds, shard.model)]
                        s.log.commit(shard.start, shard.stop, {"dataset": s.task.dataset, "model": s.task.model_name,
                                                               "start": shard.start, "stop": shard.stop, **value},
                                     complete=not value.get("failed_rows"))
                        s.done.append((shard.start, shard.stop))
                        s.in_flight -= 1
                        slot.busy -= 1
                        s.rows_done += shard.rows
                        self.shards_run += 1
                        bar.update(s.bar, advance=shard.rows, rate=f"{s.rows_done / elapsed:.1f} rows/s")
                        bar.update(overall, advance=shard.rows, rate=f"{bar.tasks[overall].completed / elapsed:.1f} "
                                   "rows/s", note=f"{failures} worker failure(s)" if failures else "")
                    finish_ready()
                    if slot.actor is not None:
                        feed(slot)
            for s in states:  # nothing left in flight: whatever is still pending had no worker to run it
                if not s.finished and s.pending:
                    s.failed.append(str(DistributedError(
                        f"{len(s.pending)} shard(s) not run: no worker for this model could start; rerun the "
                        "same command to retry them", field="shards", value=f"{s.task.model_name} · "
                        f"{s.task.dataset}")))
                    s.pending = []
            finish_ready()
        outs = [outcomes[(s.ds, s.model)] for s in sorted(states, key=lambda s: (s.model, s.ds))]
        write(workdir / "summary.json", json.dumps([o.__dict__ for o in outs], indent=2, ensure_ascii=False,
                                                    default=str))
        return outs

    def _lost(self, slot: _Slot, shard: Shard | None, exc: BaseException, by_task: dict, attempts: dict,
              waits: dict) -> None:
        """A worker died: every shard it held goes back in front of the queue, or fails past its retries."""
        # the slots the dead worker held go back to the model's cluster-wide budget
        self.coordinator.forget.remote(slot.model, worker_name(by_task_name(by_task, slot.model), slot.index,
                                                               slot.generation))
        held = [shard] if shard is not None else []
        for ref, (what, other, sh) in list(waits.items()):
            if other is slot and what == "shard":  # its queued shards die with it
                held.append(sh)
                del waits[ref]
        slot.busy = 0
        slot.ready = False
        for sh in held:
            s = by_task[(sh.ds, sh.model)]
            s.in_flight -= 1
            attempts[sh] = attempts.get(sh, 0) + 1
            if attempts[sh] > self.max_retries:
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                s.failed.append(str(DistributedError(
                    f"the worker died {attempts[sh]} times running rows {sh.start}-{sh.stop} (last: {reason}); "
                    "the other shards are kept, rerun the same command to retry this one",
                    field="shards", value=f"{s.task.model_name} · {s.task.dataset}")))
            else:
                s.pending.insert(0, sh)

    def _abandon(self, slot: _Slot, slots: dict, by_task: dict, why: str) -> None:
        if any(o.actor is not None for o in slots[slot.model]):
            return
        for s in by_task.values():
            if s.model == slot.model and s.pending:
                s.failed.append(str(DistributedError(f"{len(s.pending)} shard(s) not run: {why}; rerun the same "
                                                     "command to retry them", field="shards", value=s.task.dataset)))
                s.pending = []

    def _finish(self, s: _TaskState, workdir: Path, on_row_error: str) -> TaskOutcome:
        """Merge the task's committed shards in row order and score it once (as a local run does)."""
        from promptweave.run.execute import finish_task, task_failed

        if s.errors:  # the error of the earliest rows, as a local run meets them in row order
            s.failed.insert(0, s.errors[min(s.errors)])
        if s.failed:
            out = task_failed(s.task, workdir, "; ".join(s.failed))
            out.rows = s.n_rows
            return out
        rows: list[dict] = []
        failed_convs: list = []
        meta = None
        sent: int | None = None
        truncated = 0
        for a, b in sorted(s.done):
            part = s.log.read(a, b)
            rows.extend(part["rows"])
            if part.get("meta") is not None:
                meta = meta or {"infer_mode": part["meta"]["infer_mode"]}
                failed_convs.extend(part["meta"].get("failed_conversations") or [])
            if part.get("sent") is not None:
                sent = (sent or 0) + part["sent"]
            truncated += int(part.get("truncated") or 0)
        if meta is not None:
            meta["failed_conversations"] = failed_convs
        else:  # no shard gave one: the form's own, if it scores its rows itself
            from promptweave.forms.registry import form_for

            meta = form_for(s.task.mode).empty_meta(s.task)
        from promptweave.infer.cache import ResponseCache

        # scoring runs here, once per task; an LLM judge's calls go through the same response cache
        with ResponseCache(getattr(self, "cache_file", workdir / "cache.sqlite")) as cache:
            return finish_task(s.task, rows, meta, workdir, cache=cache, sent=sent or 0, truncated=truncated,
                               rows_total=s.n_rows, on_row_error=on_row_error)


def worker_name(model_name: str, replica: int, generation: int) -> str:
    """The Ray actor name of a model replica (``generation`` counts replacements after a worker died)."""
    return f"pw-worker-{model_name}-{replica}-{generation}"


def by_task_name(by_task: dict, model: int) -> str:
    return next(s.task.model_name for s in by_task.values() if s.model == model)


def _cause_text(exc: BaseException) -> str:
    """The worker's own error message (a PromptweaveError reads as it would in a local run)."""
    cause = getattr(exc, "cause", None)
    if not isinstance(cause, BaseException):
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    if isinstance(cause, PromptweaveError):
        return re.sub(r"^(\[PW\d+\] )(?:\[PW\d+\] )+", r"\1", str(cause))  # Ray re-wraps the code prefix
    return f"{type(cause).__name__}: {cause}"


def _actor(name: str) -> type:
    from promptweave.run.executors import ray_actors

    return getattr(ray_actors, name)

