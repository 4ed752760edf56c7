"""The same run on the local executor and on Ray with 1 and 2 workers per model, as ratios in one run.

Workload: one generated dataset (``--rows`` rows, gen mode) on two models: a tiny CPU
transformers model built here (compute-bound) and an OpenAI-compatible API model on the
loopback stand-in server with a fixed latency (latency-bound, concurrency 4, applied
cluster-wide). Every executor starts from an empty work dir (no cached answers). The
Ray instance is started once beforehand (its start-up is reported separately) and is
local (loopback) with ``--cpus`` CPUs. Then the cluster simulation's figures
(benchmarks/scale_sim.py) are printed.

    PYTHONPATH=src python benchmarks/scale_out.py [--rows 240 --latency 0.02 --cpus 2]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "servers"))
sys.path.insert(0, str(ROOT / "tests" / "models"))

CONFIG = '''
qa = dict(
    abbr="qa", path="qa.jsonl",
    reader_cfg=dict(input_columns=["question"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template=dict(round=[
            dict(role="HUMAN", prompt="Question: {{question}}\\nAnswer:")])),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="GenInferencer", max_out_len=8)),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)
datasets = [qa]
models = [
    dict(abbr="tiny-cpu", type="TransformersModel", path="{model}", batch_size=8,
         model_kwargs=dict(torch_dtype="float32", device_map="cpu"),
         meta_template=dict(round=[dict(role="HUMAN", begin="user: ", end="\\n"),
                                   dict(role="BOT", begin="assistant: ", generate=True)])),
    dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{url}", model="served", key="EMPTY",
         batch_size=4, meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                                  dict(role="BOT", api_role="BOT", generate=True)])),
]
'''


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=240)
    ap.add_argument("--latency", type=float, default=0.02)
    ap.add_argument("--cpus", type=int, default=2)
    args = ap.parse_args()

    import ray
    import torch
    from openai_stub import StubServer
    from tiny_lm import build_tiny_lm

    from promptweave.config import load_config
    from promptweave.run.executors import LocalExecutor, RunRequest
    from promptweave.run.executors.ray_executor import RayExecutor

    tmp = Path(tempfile.mkdtemp(prefix="pw-scale-out-"))
    model_dir = build_tiny_lm(tmp / "tiny")
    (tmp / "qa.jsonl").write_text("".join(json.dumps({"question": f"What is {i} plus {i}?", "answer": str(2 * i)})
                                          + "\n" for i in range(args.rows)))
    t0 = time.perf_counter()
    ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, namespace="promptweave")
    ray_start = time.perf_counter() - t0
    rows = []
    with StubServer(latency=args.latency) as srv:
        cfg_path = tmp / "config.py"
        cfg_path.write_text(CONFIG.format(model=model_dir, url=srv.url))
        cfg = load_config(cfg_path)
        for j, name in enumerate(("tiny-cpu", "api")):
            def req(tag: str, j=j, name=name) -> RunRequest:
                return RunRequest(cfg, tmp / f"{name}-{tag}", models=[j], show_progress=False)

            base = timed(lambda: LocalExecutor().run(req("local")))
            # Ray gives a 1-CPU actor one BLAS thread (OMP_NUM_THREADS=1): a local run with one thread too
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            base1 = timed(lambda: LocalExecutor().run(req("local1")))
            torch.set_num_threads(threads)
            ex1, ex2 = RayExecutor(workers=1), RayExecutor(workers=2)
            one = timed(lambda ex=ex1: ex.run(req("ray1")))
            two = timed(lambda ex=ex2: ex.run(req("ray2")))
            starts = (ex1.startup_s or 0.0, ex2.startup_s or 0.0)
            same = all((tmp / f"{name}-{t}" / "predictions" / name / "qa.jsonl").read_text()
                       == (tmp / f"{name}-local" / "predictions" / name / "qa.jsonl").read_text()
                       for t in ("ray1", "ray2"))
            rows.append((name, base, base1, one, two, same, starts))
    ray.shutdown()
    print(f"{args.rows} rows, Ray on {args.cpus} local CPUs (start-up {ray_start:.1f} s, not counted), "
          f"API latency {args.latency * 1000:.0f} ms")
    print(f"{'model':<10} {'local s':>8} {'local 1 thread':>15} {'ray 1 worker':>13} {'ray 2 workers':>14}  "
          f"{'(after workers ready: 1 / 2)':>30}  predictions identical")
    for name, base, base1, one, two, same, (s1, s2) in rows:
        print(f"{name:<10} {base:>8.2f} {base1 / base:>14.2f}x {one / base:>12.2f}x {two / base:>13.2f}x  "
              f"{(one - s1) / base:>21.2f}x / {(two - s2) / base:.2f}x  {same}")
    print("'after workers ready' leaves out each Ray run's start-up (worker processes importing torch and loading the "
          "model: paid once per worker for the whole run, however many datasets)")
    print("(ratios are time / local time: below 1 is faster than local)\n")
    print("cluster simulation (benchmarks/scale_sim.py):")
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scale_sim.py")], check=True)


if __name__ == "__main__":
    main()
