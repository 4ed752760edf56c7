"""Local transformers throughput: promptweave against hand-written loops on the same prompts, same run.

A random-init Llama (hidden 384, 4 layers, fp32, CPU; built offline as the tests build theirs)
answers N rows of prompts 20-400 tokens long, batch 16:

- generation, 32 new tokens, greedy: promptweave's ``infer_gen`` against a hand loop calling
  ``model.generate`` on left-padded batches in file order, and the same loop with the prompts
  sorted by length;
- 4-label perplexity (OpenCompass's PPL: every label's full prompt right-padded, 16 label prompts
  per forward, the label with the lowest average NLL wins): ``infer_ppl`` against that loop in
  file order and sorted by length.

The variants run interleaved, ``--repeats`` rounds, so machine load hits them alike; every
promptweave figure comes with its outputs checked against the loops' (greedy texts equal,
PPL to 1e-5 and the same chosen label). Printed: rows/s of model work per variant (median
over rounds) and promptweave's ratio to each loop per round, by wall time and by the process's CPU
time (with one torch thread, CPU time is the work done and moves far less with other jobs' load). Done-when: generation >= the
sorted loop; PPL >= 2.5x the sorted loop.

    PYTHONPATH=src python benchmarks/local_throughput.py [--rows 256] [--repeats 3] [--quick]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "models"))

from tiny_lm import build_tiny_lm  # noqa: E402

from promptweave.infer import Record  # noqa: E402
from promptweave.infer.gen import infer_gen  # noqa: E402
from promptweave.infer.ppl import infer_ppl  # noqa: E402
from promptweave.models.base import GenerationParams  # noqa: E402
from promptweave.models.hf import HFModel  # noqa: E402

WORDS = ("the quick brown fox jumps over the lazy dog Paris is the capital of France Berlin Germany "
         "question what two plus four answer").split()
LABELS = ("A", "B", "C", "D")
BATCH = 16


def contexts(tok, n: int, seed: int = 0) -> list[str]:
    """``n`` texts of 20-400 tokens (uniform), words drawn at random."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        target = rng.randint(20, 400)
        words = []
        while len(tok(" ".join(words))["input_ids"]) < target:
            words.extend(rng.choice(WORDS) for _ in range(max(1, (target - len(words)) // 3)))
        out.append(" ".join(words))
    return out


# -- hand loops ---------------------------------------------------------------------------------------------
def hand_generate(torch, model, tok, prompts: list[str], new: int, eos: set, sort: bool) -> list[str]:
    order = sorted(range(len(prompts)), key=lambda i: -len(tok(prompts[i])["input_ids"])) if sort \
        else list(range(len(prompts)))
    out = [""] * len(prompts)
    tok.padding_side = "left"
    for s in range(0, len(order), BATCH):
        idx = order[s:s + BATCH]
        enc = tok([prompts[i] for i in idx], return_tensors="pt", padding=True)
        with torch.no_grad():
            gen = model.generate(**enc, max_new_tokens=new, do_sample=False, pad_token_id=tok.pad_token_id,
                                 eos_token_id=sorted(eos), temperature=None, top_p=None, top_k=None)
        for i, row in zip(idx, gen[:, enc["input_ids"].shape[1]:].tolist()):
            cut = next((k for k, t in enumerate(row) if t in eos), len(row))
            out[i] = tok.decode(row[:cut], skip_special_tokens=True)
    return out


def hand_ppl(torch, model, tok, prompts: list[str], sort: bool) -> list[float]:
    """OpenCompass's PPL loop: each label prompt in full, right-padded, BATCH prompts per forward."""
    lens = [len(tok(p)["input_ids"]) for p in prompts]
    order = sorted(range(len(prompts)), key=lambda i: -lens[i]) if sort else list(range(len(prompts)))
    out = [0.0] * len(prompts)
    tok.padding_side = "right"
    for s in range(0, len(order), BATCH):
        idx = order[s:s + BATCH]
        enc = tok([prompts[i] for i in idx], return_tensors="pt", padding=True)
        with torch.no_grad():
            logits = model(**enc).logits
        ids = enc["input_ids"]
        lp = torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        lp = lp * enc["attention_mask"][:, 1:]
        for k, i in enumerate(idx):
            out[i] = float(-lp[k].sum()) / lens[i]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads for every variant (1: on a shared machine more threads mostly wait)")
    ap.add_argument("--quick", action="store_true", help="32 rows, 1 round: a check that it runs, not figures")
    ap.add_argument("--only", choices=("gen", "ppl"), default=None)
    args = ap.parse_args()
    if args.quick:
        args.rows, args.repeats = 32, 1
    import torch

    torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        folder = build_tiny_lm(Path(tmp) / "llama", arch="llama", hidden=384, layers=4)
        lm = HFModel(str(folder), device="cpu", dtype="float32", batch_size=BATCH, num_threads=args.threads)
        tok, model = lm.tokenizer, lm.model
        ctx = contexts(tok, args.rows)
        params = GenerationParams(max_out_len=args.new_tokens)
        gen_recs = [Record(index=i, rendered=c) for i, c in enumerate(ctx)]
        ppl_prompts = [f"{c}\nAnswer: {lab}" for c in ctx for lab in LABELS]
        ppl_recs = [Record(index=i, label=lab, rendered=f"{c}\nAnswer: {lab}", shot_ids=[])
                    for i, c in enumerate(ctx) for lab in LABELS]
        eos = set(lm.eos_ids)
        real = sum(len(tok(c)["input_ids"]) for c in ctx)
        print(f"model: random-init Llama hidden 384, 4 layers, fp32, CPU, torch threads {torch.get_num_threads()}; "
              f"{args.rows} rows ({real} prompt tokens, 20-400 each), batch {BATCH}, {args.repeats} interleaved rounds")

        variants = {}
        if args.only in (None, "gen"):
            variants.update({
                ("gen", "promptweave"): lambda: [r.output for r in infer_gen(lm, gen_recs, params)],
                ("gen", "hand, file order"): lambda: hand_generate(torch, model, tok, ctx, args.new_tokens, eos, False),
                ("gen", "hand, sorted"): lambda: hand_generate(torch, model, tok, ctx, args.new_tokens, eos, True),
            })
        if args.only in (None, "ppl"):
            variants.update({
                ("ppl", "promptweave"): lambda: [r.ppl[lab] for r in infer_ppl(lm, ppl_recs) for lab in LABELS],
                ("ppl", "hand, file order"): lambda: hand_ppl(torch, model, tok, ppl_prompts, False),
                ("ppl", "hand, sorted"): lambda: hand_ppl(torch, model, tok, ppl_prompts, True),
            })
        times: dict = {k: [] for k in variants}
        cpu: dict = {k: [] for k in variants}
        outputs: dict = {}
        for rnd in range(args.repeats):
            order = list(variants.items())
            for key, fn in order[::-1] if rnd % 2 else order:  # every other round reversed: drift hits all alike
                t0, c0 = time.perf_counter(), time.process_time()
                outputs[key] = fn()
                times[key].append(time.perf_counter() - t0)
                cpu[key].append(time.process_time() - c0)
                print(f"round {rnd + 1} {key[0]} {key[1]}: {times[key][-1]:.1f} s wall, {cpu[key][-1]:.1f} s CPU",
                      flush=True)
        for form in ("gen", "ppl"):
            keys = [k for k in variants if k[0] == form]
            if not keys:
                continue
            ours = outputs[(form, "promptweave")]
            print(f"\n{form}:")
            for k in keys:
                rate = [args.rows / t for t in times[k]]
                per_cpu = [args.rows / t for t in cpu[k]]
                line = (f"  {k[1]:<18} {statistics.median(rate):7.1f} rows/s (rounds: {', '.join(f'{r:.1f}' for r in rate)})"
                        f", {statistics.median(per_cpu):.1f} rows per CPU-second")
                if k[1] != "promptweave":
                    ratios = [a / b for a, b in zip(times[k], times[(form, "promptweave")])]
                    cpu_ratios = [a / b for a, b in zip(cpu[k], cpu[(form, "promptweave")])]
                    line += (f"; promptweave x{statistics.median(ratios):.2f} wall ({', '.join(f'{r:.2f}' for r in ratios)})"
                             f", x{statistics.median(cpu_ratios):.2f} CPU ({', '.join(f'{r:.2f}' for r in cpu_ratios)})")
                    theirs = outputs[k]
                    if form == "gen":
                        same = sum(a == b for a, b in zip(ours, theirs))
                        line += f"; texts equal {same}/{len(ours)}"
                    else:
                        diff = max(abs(a - b) for a, b in zip(ours, theirs))
                        pick = [min(range(4), key=lambda j, r=r: v[4 * r + j]) for v in (ours, theirs)
                                for r in range(args.rows)]
                        chosen = sum(a == b for a, b in zip(pick[:args.rows], pick[args.rows:]))
                        line += f"; max |PPL diff| {diff:.1e}, chosen label equal {chosen}/{args.rows}"
                print(line)


if __name__ == "__main__":
    main()
