"""Streaming ``run``: peak memory and throughput at 1x and 10x the rows, against the loopback stand-in server.

Each size runs ``promptweave run`` in a fresh process on a generated gen dataset (a
0-shot chat prompt per row) sent to the stand-in OpenAI server (its own process, no
latency, so the client is the bottleneck). Reported per size: the command's time (from
``run_cli`` in, interpreter start-up excluded), rows/s, the
child's peak RSS, and the peak RSS of a process that only loads the same config and
data (``baseline``: the data itself); ``run - baseline`` is what the run adds. Target:
that added memory at 10x within 1.2x of 1x; rows/s at 10x within 0.9x of 1x.

    PYTHONPATH=src python benchmarks/run_stream.py [--rows 4000] [--factor 10] [--concurrency 64]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from api_throughput import free_port

CONFIG = '''
datasets = [dict(abbr="qa", path="data.jsonl",
                 reader_cfg=dict(input_columns=["question", "A", "B", "C", "D"], output_column="answer"),
                 infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN",
                     prompt="Question: {{question}}\\nA. {{A}}\\nB. {{B}}\\nC. {{C}}\\nD. {{D}}\\nAnswer:")])),
                                retriever=dict(type="ZeroRetriever"),
                                inferencer=dict(type="GenInferencer", max_out_len=16)),
                 eval_cfg=dict(evaluator=dict(type="AccEvaluator"),
                               pred_postprocessor=dict(type="first_option_postprocess", options="ABCD")))]
models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="m", key="EMPTY",
               batch_size={concurrency}, meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                                                   dict(role="BOT", api_role="BOT", generate=True)]))]
'''

LOAD_ONLY = '''
import resource, sys
from promptweave.config import load_config, open_dataset
cfg = load_config(sys.argv[1])
ds = open_dataset(cfg, 0)
rows = [ds.test[i] for i in range(len(ds.test))]
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
'''

MEASURED = '''
import resource, sys, time
from promptweave.cli.app import run_cli
start = time.perf_counter()
try:
    code = run_cli(sys.argv[1:])
finally:
    sys.stderr.write("SECONDS %.3f\\n" % (time.perf_counter() - start))
    sys.stderr.write("PEAK_RSS_KB %d\\n" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(code)
'''


def make_data(folder: Path, n: int) -> None:
    with open(folder / "data.jsonl", "w") as f:
        f.writelines(json.dumps({"question": f"What is item {i} of the list, counted from the start?",
                                "A": f"alpha {i}", "B": f"beta {i}", "C": f"gamma {i}", "D": f"delta {i}",
                                "answer": "ABCD"[i % 4]}) + "\n" for i in range(n))


def one(n: int, url: str, concurrency: int, env: dict) -> dict:
    folder = Path(tempfile.mkdtemp(prefix=f"pwstream-{n}-"))
    make_data(folder, n)
    (folder / "c.py").write_text(CONFIG.format(url=url, concurrency=concurrency))
    base = subprocess.run([sys.executable, "-c", LOAD_ONLY, str(folder / "c.py")], env=env, capture_output=True,
                          text=True, check=True, cwd=folder)
    res = subprocess.run([sys.executable, "-c", MEASURED, "run", str(folder / "c.py"), "-w", str(folder / "w"),
                          "--no-progress", "--no-report"], env=env, capture_output=True, text=True, cwd=folder,
                         check=False)
    if res.returncode != 0:
        raise SystemExit(f"run failed ({res.returncode}): {res.stderr[-2000:]}")
    took = float(next(x for x in res.stderr.splitlines() if x.startswith("SECONDS")).split()[1])
    peak = int(next(x for x in res.stderr.splitlines() if x.startswith("PEAK_RSS_KB")).split()[1])
    with open(folder / "w" / "predictions" / "api" / "qa.jsonl") as f:
        lines = sum(1 for _ in f)
    assert lines == n, (lines, n)
    return {"rows": n, "seconds": took, "rows_per_s": n / took, "peak_mb": peak / 1024,
            "baseline_mb": int(base.stdout.strip()) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--factor", type=int, default=10)
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    port = free_port()
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "servers" / "openai_stub.py"), "--port",
                               str(port)], stdout=subprocess.PIPE, text=True)
    try:
        server.stdout.readline()
        url = f"http://127.0.0.1:{port}/v1"
        small = one(args.rows, url, args.concurrency, env)
        big = one(args.rows * args.factor, url, args.concurrency, env)
    finally:
        server.terminate()
        server.wait()
    for r in (small, big):
        print(f"{r['rows']:>8} rows  {r['seconds']:7.1f}s  {r['rows_per_s']:7.0f} rows/s  peak RSS {r['peak_mb']:6.0f} MB"
              f"  (data only {r['baseline_mb']:5.0f} MB, run adds {r['peak_mb'] - r['baseline_mb']:5.0f} MB)")
    added = (big["peak_mb"] - big["baseline_mb"]) / max(small["peak_mb"] - small["baseline_mb"], 1e-9)
    print(f"{args.factor}x rows: memory the run adds {added:.2f}x (target <= 1.2x), "
          f"throughput {big['rows_per_s'] / small['rows_per_s']:.2f}x (target >= 0.9x)")


if __name__ == "__main__":
    main()
