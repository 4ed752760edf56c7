"""Perf mode measured against the truth: a loopback streaming server with known timing, and AISBench beside it.

The server (tests/servers/timed_stream.py) runs in a process of its own and streams every request's first token
T0 after it arrives, then one token every T1, N tokens (defaults 150 ms, 40 ms, 40), and records when it really wrote
them (``GET /truth``). At each concurrency level promptweave's perf client sends 4 × level requests (closed loop);
its median TTFT and TPOT are compared with T0 and T1 (target: within ±5% or ±1 ms) and with what the server
recorded, and its output-token throughput with the bound level × N ÷ (T0 + (N − 1) × T1) (target ≥ 90%).

With ``--aisbench`` (or ``$PROMPTWEAVE_AIS_FULL_VENV`` set: a venv with AISBench installed with its dependencies)
the same server is measured by ``ais_bench --mode perf`` (``VLLMCustomAPIChat``, ``stream=True``, its synthetic
string dataset with the same request count and output length, ``batch_size`` = the level), side by side.

    PYTHONPATH=src python benchmarks/perf_truth.py [--levels 1,16,64,256] [--t0 0.15] [--t1 0.04] [--tokens 40]
        [--rounds 4] [--repeat 1] [--aisbench /path/to/venv]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from promptweave.models.base import GenerationParams
from promptweave.models.openai_compat import OpenAICompatModel
from promptweave.run.perf.client import PerfRequest
from promptweave.run.perf.runner import figures, measure_level
from promptweave.run.perf.schedule import Traffic

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "servers" / "timed_stream.py"


def start_server(t0: float, t1: float, tokens: int) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", "--t0", str(t0), "--t1", str(t1),
                             "--tokens", str(tokens)], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"the timed server did not start: {line!r}")
    return proc, int(line.split()[1])


def truth(port: int, reset: bool = False) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/truth{'?reset=1' if reset else ''}", timeout=30) as r:
        return json.loads(r.read())


def process_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ours(port: int, level: int, n: int, tokens: int) -> dict:
    model = OpenAICompatModel(f"http://127.0.0.1:{port}/v1", "timed", concurrency=level, timeout=60)
    params = GenerationParams(max_out_len=tokens)

    def requests():
        for i in range(n):
            text = f"request {i}: " + "word " * 64
            path, body = model.stream_request([{"role": "user", "content": text}], params)
            yield PerfRequest(i, path, body, text)

    truth(port, reset=True)
    load = measure_level(model, requests(), concurrency=level, traffic=Traffic(), count=n, duration=None,
                         counter=None)
    total, stable, _ = figures(load, level)
    raw = total.raw
    return {"ttft": raw["medians"]["TTFT"], "tpot": raw["medians"]["TPOT"],
            "out_tps": raw.get("Output Token Throughput", 0.0), "failed": raw["Failed Requests"],
            "requests": raw["Total Requests"], "tokens": raw["Total Generated Tokens"],
            "concurrency": raw["Concurrency"], "server": truth(port)}


AIS_CONFIG = '''
from ais_bench.benchmark.models import VLLMCustomAPIChat
from ais_bench.benchmark.openicl.icl_prompt_template import PromptTemplate
from ais_bench.benchmark.openicl.icl_retriever import ZeroRetriever
from ais_bench.benchmark.openicl.icl_inferencer import GenInferencer
from ais_bench.benchmark.datasets import SyntheticDataset, MATHEvaluator, math_postprocess_v2
from ais_bench.benchmark.summarizers import DefaultPerfSummarizer
from ais_bench.benchmark.calculators import DefaultPerfMetricCalculator

summarizer = dict(attr="performance", type=DefaultPerfSummarizer,
                  calculator=dict(type=DefaultPerfMetricCalculator, stats_list=["Average", "Min", "Max", "Median",
                                                                                "P75", "P90", "P99"]))

datasets = [dict(
    abbr="synthetic", type=SyntheticDataset,
    config={{"Type": "string", "RequestCount": {n}, "TrustRemoteCode": False, "StringConfig": {{
        "Input": {{"Method": "uniform", "Params": {{"MinValue": 64, "MaxValue": 64}}}},
        "Output": {{"Method": "uniform", "Params": {{"MinValue": {tokens}, "MaxValue": {tokens}}}}}}}}},
    reader_cfg=dict(input_columns=["question", "max_out_len"], output_column="answer"),
    infer_cfg=dict(prompt_template=dict(type=PromptTemplate, template="{{question}}"),
                   retriever=dict(type=ZeroRetriever), inferencer=dict(type=GenInferencer)),
    eval_cfg=dict(evaluator=dict(type=MATHEvaluator, version="v2"), pred_postprocessor=dict(type=math_postprocess_v2)),
)]
models = [dict(
    attr="service", type=VLLMCustomAPIChat, abbr="timed", path="{tok}", model="timed", stream=True,
    request_rate=0, use_timestamp=False, retry=1, api_key="", host_ip="127.0.0.1", host_port={port}, url="",
    max_out_len={tokens}, batch_size={level}, trust_remote_code=False,
    generation_kwargs=dict(temperature=0.01, ignore_eos=True),
)]
'''

TOKENIZER = '''
import sys
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.train_from_iterator(["tok word request alpha beta gamma"] * 50, trainers.BpeTrainer(
    vocab_size=300, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>").save_pretrained(sys.argv[1])
'''


def _ms(text: str) -> float:
    return float(str(text).split()[0]) / 1000.0


def theirs(venv: Path, port: int, level: int, n: int, tokens: int, work: Path) -> dict:
    py = venv / "bin" / "python"
    tok = work / "tokenizer"
    if not tok.exists():
        subprocess.run([str(py), "-c", TOKENIZER, str(tok)], check=True, capture_output=True)
    cfg = work / f"ais_c{level}.py"
    cfg.write_text(AIS_CONFIG.format(n=n, tokens=tokens, tok=tok, port=port, level=level))
    out = work / f"ais_c{level}"
    truth(port, reset=True)
    t = time.perf_counter()
    proc = subprocess.run([str(venv / "bin" / "ais_bench"), str(cfg), "--mode", "perf", "-w", str(out)],
                          capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t
    jsons = sorted(out.rglob("performances/*/synthetic.json"))
    if not jsons:
        tail = (proc.stdout + proc.stderr)[-1500:]
        return {"error": f"no performances/*/synthetic.json (exit {proc.returncode}): {tail}"}
    common = json.loads(jsons[-1].read_text())
    with open(jsons[-1].with_suffix(".csv"), newline="") as f:
        rows = {r[0]: r for r in csv.reader(f)}
    med = rows["TTFT"][5], rows["TPOT"][5]
    stage = next(iter(common["Total Requests"]))
    return {"ttft": _ms(med[0]), "tpot": _ms(med[1]),
            "out_tps": float(str(common["Output Token Throughput"][stage]).split()[0]),
            "failed": common["Failed Requests"][stage], "requests": common["Total Requests"][stage],
            "tokens": common.get("Total Generated Tokens", {}).get(stage), "wall": wall, "server": truth(port)}


def err(got: float, want: float) -> str:
    return f"{(got - want) / want * 100:+.1f}%"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--levels", default="1,16,64,256")
    ap.add_argument("--t0", type=float, default=0.15)
    ap.add_argument("--t1", type=float, default=0.04)
    ap.add_argument("--tokens", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=4, help="requests per level = rounds × level (at least 8)")
    ap.add_argument("--repeat", type=int, default=1, help="promptweave's measurement of each level, repeated")
    ap.add_argument("--aisbench", default=os.environ.get("PROMPTWEAVE_AIS_FULL_VENV"))
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    req_time = args.t0 + (args.tokens - 1) * args.t1
    proc, port = start_server(args.t0, args.t1, args.tokens)
    print(f"# server: T0={args.t0 * 1000:g} ms, T1={args.t1 * 1000:g} ms, {args.tokens} tokens "
          f"(request time {req_time * 1000:.0f} ms); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    head = ("| tool | conc. | requests | failed | tokens | TTFT median (err vs T0) | server TTFT | TPOT median "
            "(err vs T1) | server TPOT | out token/s | % of bound |")
    print(head)
    print("|---" * 11 + "|")
    work = Path(tempfile.mkdtemp(prefix="perf_truth_"))
    try:
        for level in levels:
            n = max(8, args.rounds * level)
            bound = level * args.tokens / req_time
            rows = [("promptweave", ours(port, level, n, args.tokens)) for _ in range(args.repeat)]
            if args.aisbench:
                rows.append(("AISBench", theirs(Path(args.aisbench), port, level, n, args.tokens, work)))
            for tool, r in rows:
                if "error" in r:
                    print(f"| {tool} | {level} | error: {r['error'][:300]!r} |")
                    continue
                s = r["server"]
                print(f"| {tool} | {level} | {r['requests']} | {r['failed']} | {r['tokens']} | "
                      f"{r['ttft'] * 1000:.1f} ms ({err(r['ttft'], args.t0)}) | "
                      f"{(s['ttft_median'] or 0) * 1000:.1f} ms | {r['tpot'] * 1000:.2f} ms ({err(r['tpot'], args.t1)}) "
                      f"| {(s['tpot_median'] or 0) * 1000:.2f} ms | {r['out_tps']:.1f} | "
                      f"{r['out_tps'] / bound * 100:.1f}% |", flush=True)
    finally:
        proc.terminate()
        proc.wait(10)
    print(f"# load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
