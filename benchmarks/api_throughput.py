"""Requests/s of the OpenAI-compatible backend vs concurrency, against the loopback stand-in server.

The stand-in server (tests/servers/openai_stub.py) runs in its own process and answers
every request after a fixed latency (50 ms by default), so the best possible rate at
concurrency c is c / latency. Target: >= 90% of that bound at every level up to 64.

Besides the rate it prints the latency each request spends beyond the server's own
(c / rate - latency), and the CPU per request of the client (this process) and of the
server process: on a small machine the two share the cores, so either can be the limit.

    PYTHONPATH=src python benchmarks/api_throughput.py [--latency 0.05] [--requests 1920] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from promptweave.models.base import GenerationParams
from promptweave.models.openai_compat import OpenAICompatModel

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) a process has used so far; None where /proc is not there."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--requests", type=int, default=1920, help="requests per concurrency level (at least 10 rounds)")
    ap.add_argument("--levels", default="1,4,16,64")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per level; the fastest is shown (on a shared machine the others measure its load)")
    args = ap.parse_args()
    port = free_port()
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "servers" / "openai_stub.py"), "--port",
                               str(port), "--latency", str(args.latency)], stdout=subprocess.PIPE, text=True)
    try:
        server.stdout.readline()  # the server prints its URL once it listens
        url = f"http://127.0.0.1:{port}/v1"
        print(f"stand-in server latency {args.latency * 1000:.0f} ms; {args.requests} requests per level")
        print(f"{'concurrency':>11} {'req/s':>9} {'bound':>9} {'of bound':>9} {'added/req':>10} "
              f"{'client CPU/req':>15} {'CPU ceiling':>12} {'server CPU/req':>15}")
        for c in [int(x) for x in args.levels.split(",")]:
            n = max(args.requests, 10 * c) if c > 1 else max(40, args.requests // 16)
            model = OpenAICompatModel(url, "stub", concurrency=c, backoff_base=0.0)
            convs = [[{"role": "user", "content": f"question {c}-{i}"}] for i in range(n)]
            model.chat(convs[: min(c, n)], GenerationParams(max_out_len=8))  # warm up the code paths
            runs = []
            for _ in range(args.repeat):
                s0 = process_cpu(server.pid)
                t0, c0 = time.perf_counter(), time.process_time()
                model.chat(convs, GenerationParams(max_out_len=8))
                rate = n / (time.perf_counter() - t0)
                cpu = (time.process_time() - c0) / n
                s1 = process_cpu(server.pid)
                runs.append((rate, cpu, None if s0 is None or s1 is None else (s1 - s0) / n))
            rate, cpu, server_cpu = max(runs, key=lambda r: r[0])
            bound = c / args.latency
            added = (c / rate - args.latency) * 1000
            served = "n/a" if server_cpu is None else f"{server_cpu * 1000:.2f} ms"
            # the client process cannot go faster than one request per ``cpu`` seconds of its own CPU
            print(f"{c:>11} {rate:>9.1f} {bound:>9.1f} {rate / bound:>8.1%} {added:>7.2f} ms {cpu * 1000:>12.2f} ms "
                  f"{1 / cpu:>9.0f}/s {served:>15}")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
