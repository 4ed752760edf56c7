"""What a spread adds to prompt building: 1,000 rows × 16 format variants, against building those prompts.

    PYTHONPATH=src python benchmarks/spread_build.py            # about a minute on 2 busy cores
    PYTHONPATH=src python benchmarks/spread_build.py --quick

The config is the bundled ``examples/run_openai_server.py`` science task on 1,000 generated MMLU-shaped rows,
with two models: the example's chat API model (messages) and a text model with a ChatML meta template
(strings). Nothing is sent: only planning and prompt building are timed, as a run does them (every
task's ``LazyRecords`` consumed batch by batch, read by its columns, each batch dropped).

- ``run``: ``plan_config`` on the config, then its prompts: what ``promptweave run`` spends before its first
  call (dataset read, evaluator built, one builder per model);
- ``run × 16``: ``run`` sixteen times: the cost of building 16 × 1,000 prompts per model the way run builds them;
- ``build``: only the prompts of the same 16 variants: one ``PromptBuilder`` per variant × model over datasets
  opened and variant templates compiled beforehand (outside the timing), consumed as ``run`` consumes them;
- ``spread``: (split into its planning and its prompts in the output) ``spread.execute.plan_variants`` + ``plan_tasks`` for 16 variants (the grammar drawn, the dataset
  read once, each variant's templates compiled, planned by run's planner) and every variant's prompts.

The figures: ``spread / (run + build × 15/16)``, what a spread costs against a run plus building the other 15
variants' prompts (at or below 1.0: the spread adds no more than building those prompts); ``spread / build``
(the planning a spread adds over bare building); ``spread / (run × 16)`` (against sixteen separate runs). Times are this process's CPU time, the
median of alternating repetitions, each after a ``gc.collect()``.
"""
from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

from promptweave.config import load_config
from promptweave.run.plan import plan_config
from promptweave.run.task import LazyRecords
from promptweave.spread.execute import SpreadRequest, plan_tasks, plan_variants

ROOT = Path(__file__).resolve().parents[1]
TEXT_MODEL = '''
models = models + [dict(abbr="served-text", type="OpenAICompatModel", kind="lm", base_url="http://127.0.0.1:9/v1",
                        model="served", key="EMPTY", max_out_len=32,
                        meta_template=dict(round=[dict(role="HUMAN", begin="<|im_start|>user\\n", end="<|im_end|>\\n"),
                                                  dict(role="BOT", begin="<|im_start|>assistant\\n",
                                                       end="<|im_end|>\\n", generate=True)]))]
'''


def make_config(folder: Path, n_rows: int) -> Path:
    rng = random.Random(25)
    words = [f"w{i}" for i in range(400)]
    (folder / "data").mkdir(parents=True, exist_ok=True)
    with open(folder / "data" / "science_mc.jsonl", "w", encoding="utf-8") as f:
        for _ in range(n_rows):
            row = {"question": " ".join(rng.choices(words, k=rng.randint(8, 30))) + "?"}
            row.update({c: " ".join(rng.choices(words, k=rng.randint(1, 5))) for c in "ABCD"})
            row["answer"] = rng.choice("ABCD")
            f.write(json.dumps(row) + "\n")
    cfg = folder / "config.py"
    cfg.write_text((ROOT / "examples" / "run_openai_server.py").read_text() + TEXT_MODEL)
    return cfg


def consume(tasks: list) -> int:
    n = 0
    for t in tasks:
        recs = t.records
        if isinstance(recs, LazyRecords):
            for batch in recs.batches(4096):
                n += len(batch.prompts) if getattr(batch, "columnar", False) else len(list(batch))
                del batch
        else:
            n += len(list(recs))
    return n


def time_run(cfg_path: Path) -> tuple[float, int]:
    cfg = load_config(cfg_path)
    t0 = time.process_time()
    n = consume(plan_config(cfg, datasets=[0]))
    return time.process_time() - t0, n


def time_spread(cfg_path: Path, variants: int) -> tuple[float, int]:
    from promptweave.spread import grammar

    grammar.clear_cache()  # each timing starts as a fresh process would: nothing drawn or rewritten yet
    cfg = load_config(cfg_path)
    t0 = time.process_time()
    req = SpreadRequest(cfg, Path("unused"), [0], list(range(len(cfg.models))), n=variants)
    planned = plan_tasks(req, plan_variants(req))
    t1 = time.process_time()
    n = sum(consume(tasks) for tasks in planned.values())
    t2 = time.process_time()
    SPREAD_PARTS.append((t1 - t0, t2 - t1))
    return t2 - t0, n


SPREAD_PARTS: list[tuple[float, float]] = []  # (planning, building) of each spread timing


def build_specs(cfg_path: Path, variants: int) -> tuple[list, list]:
    """Every variant's opened dataset spec and the models' specs, made outside the timing."""
    from promptweave.config import open_dataset, open_model
    from promptweave.spread.execute import variant_spec
    from promptweave.spread.variants import dataset_variants

    cfg = load_config(cfg_path)
    base = open_dataset(cfg, 0)
    specs = [variant_spec(base, v, file=str(cfg.path), where="datasets[0]")
             for v in dataset_variants(cfg.datasets[0], variants)]
    return specs, [open_model(cfg, j) for j in range(len(cfg.models))]


def time_build(specs: list, models: list) -> tuple[float, int]:
    from promptweave.engine import PromptBuilder

    t0 = time.process_time()
    n = 0
    for spec in specs:
        for m in models:
            b = PromptBuilder(spec, m, "gen")
            n += consume([_Bare(LazyRecords(b.build_all, range(len(spec.test)), chunks=b.record_chunks))])
    return time.process_time() - t0, n


class _Bare:
    def __init__(self, records: LazyRecords) -> None:
        self.records = records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--variants", type=int, default=16)
    args = ap.parse_args()
    reps = 3 if args.quick else 7
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        cfg = make_config(Path(tmp), args.rows)
        time_run(cfg), time_spread(cfg, 2)  # warm imports and caches outside the timing
        runs, spreads, builds, singles = [], [], [], []
        n_run = n_spread = n_build = 0
        order = ["run", "spread", "build"]
        for rep in range(reps):
            for which in order[rep % 3:] + order[:rep % 3]:
                gc.collect()
                if which == "build":
                    specs, models = build_specs(cfg, args.variants)  # fresh templates: nothing compiled yet
                    gc.collect()
                    t, n_build = time_build(specs, models)
                    builds.append(t)
                    del specs, models
                elif which == "run":
                    batch = []
                    for _ in range(args.variants):
                        t, n_run = time_run(cfg)
                        batch.append(t)
                    runs.append(sum(batch))
                    singles.append(batch[0])
                else:
                    t, n_spread = time_spread(cfg, args.variants)
                    spreads.append(t)
    run16, spread, build = statistics.median(runs), statistics.median(spreads), statistics.median(builds)
    run1 = statistics.median(singles)
    assert n_spread == n_run * args.variants == n_build, (n_spread, n_run, n_build)
    v = args.variants
    out = {"rows": args.rows, "variants": v, "models": 2, "prompts": n_spread, "repetitions": reps,
           "run_s": round(run1, 4), "build_s": round(build, 4), "spread_s": round(spread, 4),
           "run_x16_s": round(run16, 4),
           "ratio_spread_to_run_plus_build_others": round(spread / (run1 + build * (v - 1) / v), 3),
           "ratio_spread_to_build": round(spread / build, 3),
           "ratio_spread_to_run_x16": round(spread / run16, 3),
           "spread_planning_s": round(statistics.median(p for p, _ in SPREAD_PARTS[1:]), 4),
           "spread_prompts_only_s": round(statistics.median(b for _, b in SPREAD_PARTS[1:]), 4),
           "us_per_prompt": {"spread": round(spread / n_spread * 1e6, 2), "build": round(build / n_build * 1e6, 2),
                             "run": round(run1 / n_run * 1e6, 2)}}
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
