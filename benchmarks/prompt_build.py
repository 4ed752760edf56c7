"""Prompt building: promptweave's compiled plans and general path against hand-written joins, in one run.

    PYTHONPATH=src python benchmarks/prompt_build.py            # about 2-3 minutes on 2 busy cores
    PYTHONPATH=src python benchmarks/prompt_build.py --quick    # a smaller, shorter look

Workloads (MMLU-shaped rows generated here: a question and four options):
- W1: 5-shot FixK generation, dialogue template, LM meta template (ChatML);
- W2: 5-shot FixK perplexity, 4 labels (one prompt per label), LM meta template;
- W3: 0-shot chat API messages (``[{"role": ..., "prompt": ...}]``);
- W4: 8 shots per row chosen by BM25 (precomputed, so only building is timed), LM meta template.

Variants, each producing the full list of a task's prompts:
- ``records``: ``list(PromptBuilder(...).build_all())``, the default path (plans compiled to code), one
  ``PromptRecord`` per prompt;
- ``prompts``: ``list(PromptBuilder(...).prompts())``, the same compiled code producing only what the model
  receives (no record objects);
- ``general``: ``build_all(compiled=False)`` (fill a Dialogue, render it with the meta template);
- ``hand``: one ``''.join`` per prompt written by hand for that one template, no records (the ceiling);
- ``run``: what ``promptweave run`` feeds its inferencers: ``LazyRecords(...).batches(4096)`` (run/task.py), each
  batch the builder's own chunk, read by its columns as the gen and ppl inferencers read it (prompt list, row
  indices, example ids, and labels for ppl: ``columns_of``; no record object), each batch dropped once fed
  (nothing holds a task's prompts), against ``hand_stream``: the hand join over the same 4,096-row chunks, each
  chunk's prompts dropped likewise.

Repetitions alternate the variants (rotating their order), each timed call starts after a ``gc.collect()``
(outside the timing: no variant pays for the collector passes another's garbage set off), and each figure is
the median; the general path,
far slower, alternates with the hand baseline in rounds of its own (its ratio is to hand in those rounds). Every variant's
prompts are checked equal before timing. Times are this process's CPU time (``--clock wall`` for wall
time): on a shared machine, other processes' load then does not land in one variant's figures. Scaling: W3 at 1x and 10x rows, prompts/s kept at 10x for
promptweave (``prompts()`` and ``build_all()``) against the hand baseline. Peak RSS: each (variant, size) of W3 in its own process.
"""
from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import subprocess
import sys
import time
import warnings

from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder
from promptweave.infer.records import columns_of, prompts_of
from promptweave.run.task import LazyRecords
from promptweave.shots.base import Retriever

META = {"round": [{"role": "HUMAN", "begin": "<|im_start|>user\n", "end": "<|im_end|>\n"},
                  {"role": "BOT", "begin": "<|im_start|>assistant\n", "end": "<|im_end|>\n", "generate": True}]}
API_META = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}]}
Q = "{question}\nA. {A}\nB. {B}\nC. {C}\nD. {D}\nAnswer:"
COLS = ["question", "A", "B", "C", "D"]
LABELS = "ABCD"


def rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(500)]
    out = []
    for _ in range(n):
        r = {c: " ".join(rng.choices(words, k=rng.randint(4, 30) if c == "question" else 3)) for c in COLS}
        r["answer"] = rng.choice(LABELS)
        out.append(r)
    return out


DIALOGUE = {"round": [{"role": "HUMAN", "prompt": Q}, {"role": "BOT", "prompt": "{answer}"}]}


def cfg_w1() -> dict:
    return {"ice_template": {"type": "PromptTemplate", "ice_token": "</E>", "template": {"begin": "</E>",
                                                                                       **DIALOGUE}},
            "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1, 2, 3, 4]},
            "inferencer": {"type": "GenInferencer"}}


def cfg_w2() -> dict:
    return {"ice_template": {"type": "PromptTemplate", "template": DIALOGUE},
            "prompt_template": {"type": "PromptTemplate", "ice_token": "</E>", "template": {
                lab: {"begin": "</E>", "round": [{"role": "HUMAN", "prompt": Q}, {"role": "BOT", "prompt": lab}]}
                for lab in LABELS}},
            "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1, 2, 3, 4]},
            "inferencer": {"type": "PPLInferencer"}}


def cfg_w3() -> dict:
    return {"prompt_template": {"type": "PromptTemplate", "template": DIALOGUE},
            "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}


def cfg_w4() -> dict:
    cfg = cfg_w1()
    cfg["retriever"] = {"type": "BM25Retriever", "ice_num": 8}
    return cfg


class Precomputed(Retriever):
    """Hands out ids chosen beforehand (by BM25 here), so that only prompt building is timed."""

    name = "BM25Retriever"

    def __init__(self, ids: list[list[int]]) -> None:
        super().__init__()
        self.ids = ids

    def select(self, train, test, *, same_split=False):
        # the lists themselves, as the hand baseline reads them (a copy per row would put 2,000 new lists,
        # and the collector's passes they set off, into the building time)
        return self.ids


def dataset(cfg: dict, train: list, test: list) -> DatasetSpec:
    return DatasetSpec.from_config({"abbr": "b", "reader_cfg": {"input_columns": COLS, "output_column": "answer"},
                                    "infer_cfg": cfg}, train=train, test=test)


def model(kind: str) -> ModelSpec:
    return ModelSpec.from_config({"abbr": "m", "kind": kind, "meta_template": API_META if kind == "api" else META})


# ---------------------------------------------------------------- the hand-written joins
U, A, E = "<|im_start|>user\n", "<|im_start|>assistant\n", "<|im_end|>\n"


def shot_text(r: dict) -> str:
    return "".join((U, r["question"], "\nA. ", r["A"], "\nB. ", r["B"], "\nC. ", r["C"], "\nD. ", r["D"],
                    "\nAnswer:", E, A, r["answer"], E))


def hand_w1(train: list, test: list) -> list:
    shots = "".join(shot_text(r) for r in train[:5])
    join = "".join
    return [join((shots, U, r["question"], "\nA. ", r["A"], "\nB. ", r["B"], "\nC. ", r["C"], "\nD. ", r["D"],
                  "\nAnswer:", E, A)) for r in test]


def hand_w2(train: list, test: list) -> list:
    shots = "".join(shot_text(r) for r in train[:5])
    tails = [f"\nAnswer:{E}{A}{lab}{E}" for lab in LABELS]
    join = "".join
    out = []
    add = out.append
    for r in test:
        for tail in tails:
            add(join((shots, U, r["question"], "\nA. ", r["A"], "\nB. ", r["B"], "\nC. ", r["C"], "\nD. ", r["D"],
                      tail)))
    return out


def hand_w3(train: list, test: list) -> list:
    join = "".join
    return [[{"role": "HUMAN", "prompt": join((r["question"], "\nA. ", r["A"], "\nB. ", r["B"], "\nC. ", r["C"],
                                               "\nD. ", r["D"], "\nAnswer:"))}] for r in test]


def hand_w4(train: list, test: list, ids: list[list[int]]) -> list:
    shots = [shot_text(r) for r in train]
    join = "".join
    return [join((join([shots[j] for j in ids[i]]), U, r["question"], "\nA. ", r["A"], "\nB. ", r["B"], "\nC. ",
                  r["C"], "\nD. ", r["D"], "\nAnswer:", E, A)) for i, r in enumerate(test)]


def bm25_ids(train: list, test: list, k: int) -> list[list[int]]:
    from promptweave.shots.bm25 import BM25Retriever

    return BM25Retriever(ice_num=k, input_columns=COLS, use_cache=False).select(train, test)


# ---------------------------------------------------------------- timing
SPECS: dict = {}


def workloads(a) -> dict:
    train = rows(200, 1)
    w1 = rows(a.rows, 2)
    w3 = rows(a.chat_rows, 3)
    w4 = rows(a.bm25_rows, 4)
    ids4 = bm25_ids(train, w4, 8)
    out = {}
    for name, cfg, test, kind, hand in (("W1", cfg_w1(), w1, "lm", lambda: hand_w1(train, w1)),
                                         ("W2", cfg_w2(), w1, "lm", lambda: hand_w2(train, w1)),
                                         ("W3", cfg_w3(), w3, "api", lambda: hand_w3(train, w3)),
                                         ("W4", cfg_w4(), w4, "lm", lambda: hand_w4(train, w4, ids4))):
        ds = dataset(cfg, train, test)
        if name == "W4":
            ds.retriever = Precomputed(ids4)
        m = model(kind)
        SPECS[name] = (ds, m)
        out[name] = {
            "records": lambda ds=ds, m=m: list(PromptBuilder(ds, m).build_all()),
            "prompts": lambda ds=ds, m=m: list(PromptBuilder(ds, m).prompts()),
            "general": lambda ds=ds, m=m: list(PromptBuilder(ds, m).build_all(compiled=False)),
            "hand": hand,
            "run": lambda ds=ds, m=m, name=name: stream(lazy(PromptBuilder(ds, m), 4 if name == "W2" else 1)),
            "hand_stream": lambda name=name, test=test: stream(hand_chunks(name, train, test, ids4)),
        }
    return out


class Counted:
    """A streamed variant's result: how many prompts went by (none of them kept)."""

    def __init__(self, n: int) -> None:
        self.n = n


def lazy(builder: PromptBuilder, per_row: int) -> LazyRecords:
    """A task's records as ``promptweave run`` plans them (run/plan.py)."""
    return LazyRecords(builder.build_all, range(len(builder.dataset.test)), per_row=per_row,
                       chunks=builder.record_chunks)


def stream(items) -> Counted:
    """Feed a LazyRecords batch by batch as the run does (each batch's prompt list, as the gen inferencer takes
    it; each batch dropped once counted), or sum a generator of chunk counts."""
    if isinstance(items, LazyRecords):
        n = 0
        for batch in items.batches(4096):
            cols = columns_of(batch)
            assert cols is not None, "a compiled chunk is read by its columns"
            indices, prompts, shots = cols
            labels = batch.labels if items.per_row > 1 else None  # what infer_ppl reads besides
            n += len(prompts)
            del batch, cols, indices, prompts, shots, labels  # dropped before the next is built, as the run does
        return Counted(n)
    return Counted(sum(items))


def hand_chunks(name: str, train: list, test: list, ids: list, chunk: int = 4096):
    """The hand join over 4,096-row chunks; yields each chunk's prompt count after dropping its prompts."""
    fn = {"W1": hand_w1, "W2": hand_w2, "W3": hand_w3}.get(name)
    for s in range(0, len(test), chunk):
        part = fn(train, test[s:s + chunk]) if fn else hand_w4(train, test[s:s + chunk], ids[s:s + chunk])
        yield len(part)
        del part


def rendered(result: list) -> list:
    return [r.rendered for r in result] if result and hasattr(result[0], "rendered") else result


CLOCK = time.process_time


def timed(fn) -> tuple[float, int]:
    # Each variant starts with the collector's counts at zero, so that none pays for the passes that the
    # previous one's garbage set off (a pass runs in whichever code allocates next: never in the hand loop,
    # which makes only strings); each then pays for the passes its own objects cause.
    gc.collect()
    t = CLOCK()
    res = fn()
    dt = CLOCK() - t
    n = res.n if isinstance(res, Counted) else len(res)
    del res
    return dt, n


def interleaved(jobs: dict[str, dict], reps: int) -> dict[str, dict[str, float]]:
    """Median seconds per (workload, variant); variants alternate within each repetition."""
    times: dict[tuple[str, str], list[float]] = {}
    counts: dict[str, int] = {}
    for rep in range(reps):
        for w, variants in jobs.items():
            names = list(variants)
            names = names[rep % len(names):] + names[:rep % len(names)]
            for v in names:
                dt, n = timed(variants[v])
                times.setdefault((w, v), []).append(dt)
                counts[w] = n
    return {w: {v: statistics.median(times[(w, v)]) for v in jobs[w]} | {"n": counts[w]} for w in jobs}


def _vm(field: str) -> int:
    """A field of /proc/self/status, in MiB (VmHWM: this process's peak resident set)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    return -1


def rss_child(variant: str, n: int) -> dict:
    """One W3 build in a fresh process: resident set after making the rows, and the peak after building."""
    code = (f"import sys, warnings; warnings.simplefilter('ignore');"
            f"sys.path.insert(0, {__file__.rsplit('/', 1)[0]!r}); import prompt_build as pb;"
            f"test = pb.rows({n}, 3); ds = pb.dataset(pb.cfg_w3(), [], test); m = pb.model('api');"
            f"base = pb._vm('VmRSS');"
            f"res = pb.hand_w3([], test) if {variant!r} == 'hand' else list(pb.PromptBuilder(ds, m).build_all());"
            f"print(base, pb._vm('VmHWM'))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return {"data_mib": int(out[0]), "peak_mib": int(out[1]), "build_mib": int(out[1]) - int(out[0])}


def scaling(a) -> tuple[dict, dict]:
    """W3 at 1x and 10x rows, prompts(), build_all() and hand alternating."""
    big = rows(a.chat_rows * 10, 30)
    small = big[:a.chat_rows]
    ds_s, ds_b, m = dataset(cfg_w3(), [], small), dataset(cfg_w3(), [], big), model("api")
    scale = interleaved({
        "1x": {"prompts": lambda: list(PromptBuilder(ds_s, m).prompts()),
               "records": lambda: list(PromptBuilder(ds_s, m).build_all()), "hand": lambda: hand_w3([], small)},
        "10x": {"prompts": lambda: list(PromptBuilder(ds_b, m).prompts()),
                "records": lambda: list(PromptBuilder(ds_b, m).build_all()), "hand": lambda: hand_w3([], big)},
    }, max(3, a.reps // 2))
    keep = {v: (len(big) / scale["10x"][v]) / (len(small) / scale["1x"][v]) for v in ("prompts", "records", "hand")}
    print(f"\nW3 scaling {len(small):,} -> {len(big):,} rows (all prompts kept), prompts/s at 1x -> 10x:")
    for v, name in (("prompts", "prompts()"), ("records", "build_all()"), ("hand", "hand")):
        print(f"  {name:<12}{len(small) / scale['1x'][v]:>11,.0f} -> {len(big) / scale['10x'][v]:>11,.0f}"
              f"  keeps {keep[v]:.2f}" + ("" if v == "hand" else f" ({keep[v] / keep['hand']:.2f}x as well as hand)"))
    return scale, keep


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=14_000, help="W1/W2 test rows")
    ap.add_argument("--chat-rows", type=int, default=50_000, help="W3 test rows (x10 for the scaling line)")
    ap.add_argument("--bm25-rows", type=int, default=2_000, help="W4 test rows")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    a = ap.parse_args()
    global CLOCK
    CLOCK = time.process_time if a.clock == "cpu" else time.perf_counter
    if a.quick:
        a.rows, a.chat_rows, a.bm25_rows, a.reps = 4_000, 10_000, 500, 3
    warnings.simplefilter("ignore")

    jobs = workloads(a)
    for w, variants in jobs.items():  # same prompts from every variant (and warm-up)
        got = {v: rendered(fn()) for v, fn in variants.items() if v not in ("run", "hand_stream")}
        assert got["records"] == got["prompts"] == got["general"] == got["hand"], f"{w}: variants disagree"
        ds, m = SPECS[w]
        assert [r.rendered for r in LazyRecords(PromptBuilder(ds, m).build_all, range(len(ds.test)))] == got["hand"]
        batches = lazy(PromptBuilder(ds, m), 4 if w == "W2" else 1).batches(4096)
        assert [p for b in batches for p in prompts_of(b)] == got["hand"], f"{w}: run batches disagree"
        assert variants["run"]().n == variants["hand_stream"]().n == len(got["hand"])
        del got, batches  # nothing of the checks stays alive while timing
    # the general path is 20-150x slower and leaves much garbage behind: timed in its own rounds
    general = {w: {"general": v.pop("general"), "hand": v["hand"]} for w, v in jobs.items()}
    med = interleaved(jobs, a.reps)
    gen_med = interleaved(general, max(3, a.reps // 3))
    for w in med:
        med[w]["general"] = gen_med[w]["general"] * med[w]["hand"] / gen_med[w]["hand"]
    print(f"{'workload':<42}{'prompts':>8}{'hand/s':>11}{'records':>9}{'prompts':>9}{'general':>9}{'run':>9}"
          f"   (time ÷ hand's, run ÷ hand streamed; medians of {a.reps}, {CLOCK.__name__})")
    names = {"W1": "W1 gen, 5-shot FixK, dialogue + LM meta", "W2": "W2 ppl, 5-shot FixK, 4 labels, LM meta",
             "W3": "W3 chat API messages, 0-shot", "W4": "W4 gen, 8 BM25 shots per row, LM meta"}
    for w, m in med.items():
        n = m["n"]
        print(f"{names[w]:<42}{n:>8}{n / m['hand']:>11,.0f}{m['records'] / m['hand']:>8.2f}x"
              f"{m['prompts'] / m['hand']:>8.2f}x{m['general'] / m['hand']:>8.2f}x"
              f"{m['run'] / m['hand_stream']:>8.2f}x")

    scale, keep = scaling(a)

    rss = {f"{v}@{n}": rss_child(v, n) for n in (a.chat_rows, a.chat_rows * 10) for v in ("records", "hand")}
    print("peak RSS, W3 in a fresh process (MiB: rows' data, then + building every prompt of the task): "
          + "; ".join(f"{k} {r['data_mib']} + {r['build_mib']}" for k, r in rss.items()))
    print(f"this process peak RSS: {_vm('VmHWM')} MiB")
    if a.json:
        print(json.dumps({"medians_s": med, "scaling": {"medians_s": scale, "keeps": keep}, "rss_mib": rss},
                         indent=1))


if __name__ == "__main__":
    main()
