"""Simulates a promptweave Ray run at cluster scale (no cluster needed): shard size vs makespan, driver load,
object-store traffic and work redone after node losses.

The model (see docs/scale-out.md): R = nodes × GPUs model replicas pull shards of ``s`` rows from one driver.
A shard costs its replica ``ceil(s / bs)`` batches of ``t_batch`` seconds (log-normal jitter per shard) plus a
fixed ``t_dispatch`` (prompt building setup, RPC); the driver commits each finished shard serially
(``c_shard`` + ``c_row`` × s seconds: one fsync'd file, a rename, a progress update), so it is a single queue
every shard passes through. Nodes fail at ``node_mtbf`` hours on average; a failure loses the in-flight shards
of that node's replicas, which are redone elsewhere. Object-store traffic: test rows travel in blocks, so a
node fetches the rows of the shards it runs; each node fetches a dataset's train split (the example pool) and
retrieval ids once; every shard returns its predictions (``out_bytes`` per row) to the driver.

    python benchmarks/scale_sim.py [--nodes 100 --gpus 8 --rows 10000000 --bs 32]
"""
from __future__ import annotations

import argparse
import heapq
import math
import random
from dataclasses import dataclass


@dataclass
class Params:
    nodes: int = 100
    gpus: int = 8
    rows: int = 10_000_000
    datasets: int = 200
    bs: int = 32
    t_batch: float = 0.8  # seconds per batch of bs rows on one GPU replica
    jitter: float = 0.25  # sigma of the log-normal per-shard slowdown
    t_dispatch: float = 0.05  # per shard on the replica: RPC, building that shard's prompts setup
    c_shard: float = 0.004  # driver seconds per committed shard (fsync + rename + bookkeeping)
    c_row: float = 2e-6  # driver seconds per committed row (json)
    row_bytes: int = 2_000  # a dataset row as stored (question, choices, answer)
    prompt_bytes: int = 6_000  # a built prompt with in-context examples (what we do not ship)
    out_bytes: int = 1_500  # a prediction row returned with its shard
    train_rows: int = 1_000  # example pool per dataset (train split), fetched once per node that uses it
    node_mtbf_h: float = 200.0  # mean hours between failures of one node
    seed: int = 0


def simulate(p: Params, shard: int) -> dict[str, float]:
    rng = random.Random(p.seed)
    replicas = p.nodes * p.gpus
    n_shards = math.ceil(p.rows / shard)
    batches = math.ceil(shard / p.bs)
    queue = list(range(n_shards))
    queue.reverse()
    events: list[tuple[float, int, int, int]] = []  # (time, kind 0=finish, replica, shard)
    busy: dict[int, tuple[int, float]] = {}
    driver_free = 0.0
    driver_busy = 0.0
    redone_rows = 0
    done = 0
    now = 0.0
    last_commit = 0.0
    fail_rate = p.nodes / (p.node_mtbf_h * 3600.0)
    next_fail = rng.expovariate(fail_rate) if fail_rate else math.inf

    def start(r: int, t: float) -> None:
        if not queue:
            return
        s = queue.pop()
        rows = min(shard, p.rows - s * shard)
        dur = p.t_dispatch + math.ceil(rows / p.bs) * p.t_batch * rng.lognormvariate(0.0, p.jitter)
        busy[r] = (s, t)
        heapq.heappush(events, (t + dur, 0, r, s))

    for r in range(replicas):
        start(r, 0.0)
    while events:
        t, _, r, s = heapq.heappop(events)
        while next_fail < t:  # a node dies: its replicas' shards go back to the queue
            node = rng.randrange(p.nodes)
            for rr in range(node * p.gpus, (node + 1) * p.gpus):
                if rr in busy:
                    lost, began = busy.pop(rr)
                    redone_rows += int(min(shard, p.rows - lost * shard) * min(1.0, (next_fail - began) / max(
                        t - began, 1e-9)))
                    queue.append(lost)
                    heapq.heappush(events, (next_fail + 60.0, 1, rr, -1))  # a replacement loads in ~60 s
            next_fail += rng.expovariate(fail_rate)
        if s == -1:  # a replacement replica is ready
            start(r, t)
            continue
        if busy.get(r, (None,))[0] != s:
            continue  # this shard was lost with its node
        busy.pop(r)
        rows = min(shard, p.rows - s * shard)
        cost = p.c_shard + p.c_row * rows
        driver_free = max(driver_free, t) + cost
        driver_busy += cost
        last_commit = driver_free
        done += 1
        now = t
        start(r, t)
    ideal = math.ceil(p.rows / p.bs) * p.t_batch / replicas
    # test rows in blocks: each row once (plus redone ones); train pools and ids once per node and dataset
    traffic_in = (p.rows + redone_rows) * p.row_bytes + p.nodes * p.datasets * (p.train_rows * p.row_bytes + 0)
    whole = p.nodes * p.rows * p.row_bytes  # had every node fetched every dataset whole
    return {
        "shard_rows": shard,
        "shards": n_shards,
        "makespan_h": last_commit / 3600.0,
        "vs_ideal": last_commit / ideal,
        "driver_util": driver_busy / max(last_commit, 1e-9),
        "redone_rows": redone_rows,
        "store_in_GB": traffic_in / 1e9,
        "whole_datasets_GB": whole / 1e9,
        "prompts_if_shipped_GB": p.rows * p.prompt_bytes / 1e9,
        "results_GB": p.rows * p.out_bytes / 1e9,
        "batches_per_shard": batches,
        "finished_shards": done,
        "_last_finish_h": now / 3600.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--mtbf", type=float, default=200.0, help="mean hours between failures of one node")
    args = ap.parse_args()
    p = Params(nodes=args.nodes, gpus=args.gpus, rows=args.rows, bs=args.bs, node_mtbf_h=args.mtbf)
    from promptweave.run.executors.shards import auto_shard_rows

    auto = auto_shard_rows(p.rows // p.datasets, p.bs, p.nodes * p.gpus)
    print(f"{p.nodes} nodes x {p.gpus} GPUs = {p.nodes * p.gpus} replicas, {p.rows:.0e} rows in {p.datasets} "
          f"datasets, batch {p.bs}; auto shard size per dataset: {auto} rows")
    print(f"{'shard rows':>10} {'shards':>8} {'makespan h':>10} {'x ideal':>8} {'driver busy':>11} "
          f"{'rows redone':>11}")
    for shard in sorted({p.bs, 4 * p.bs, auto, 64 * p.bs, 512 * p.bs, 4096 * p.bs}):
        r = simulate(p, shard)
        print(f"{r['shard_rows']:>10} {r['shards']:>8} {r['makespan_h']:>10.2f} {r['vs_ideal']:>8.3f} "
              f"{r['driver_util']:>10.0%} {r['redone_rows']:>11}")
    r = simulate(p, auto)
    print(f"object store: rows + example pools in {r['store_in_GB']:.1f} GB (every dataset whole to every node: "
          f"{r['whole_datasets_GB']:.0f} GB); predictions back {r['results_GB']:.1f} GB; shipping built prompts "
          f"from the driver instead: {r['prompts_if_shipped_GB']:.1f} GB")
    stress = Params(**{**p.__dict__, "node_mtbf_h": 0.5})
    print(f"node failures (stress: one node in {stress.node_mtbf_h * 60 / p.nodes:.1f} min somewhere in the cluster):")
    print(f"{'shard rows':>10} {'makespan h':>10} {'x ideal':>8} {'rows redone':>11}")
    for shard in sorted({auto, 16 * p.bs, 512 * p.bs, 4096 * p.bs}):
        r = simulate(stress, shard)
        print(f"{r['shard_rows']:>10} {r['makespan_h']:>10.3f} {r['vs_ideal']:>8.3f} {r['redone_rows']:>11}")


if __name__ == "__main__":
    main()
