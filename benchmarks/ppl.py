"""Shared-prefix vs naive PPL scoring: forward tokens and wall time on 4-label, 5-shot rows.

Builds a small random GPT-2 offline (as the tests do), then scores the same rows both
ways in the same process. Target: shared-prefix forwards <= 1.3x the tokens of one prompt
per row (naive forwards ~4x).

    PYTHONPATH=src python benchmarks/ppl.py [--rows 20] [--hidden 128] [--layers 4]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "models"))

from tiny_lm import build_tiny_lm  # noqa: E402

from promptweave.infer import Record, infer_ppl  # noqa: E402
from promptweave.models.hf import HFModel  # noqa: E402


def rows(n: int) -> list[Record]:
    shots = "".join(f"Question: Paris is the capital of which country, number {k}?\nAnswer: France\n\n"
                    for k in range(5))
    labels = ["A", "B", "C", "D"]
    return [Record(index=i, label=lab, shot_ids=list(range(5)), mode="ppl",
                   rendered=f"{shots}Question: The quick brown fox {i} jumps over which dog?\nAnswer: {lab}")
            for i in range(n) for lab in labels]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_tiny_lm(Path(tmp) / "lm", hidden=args.hidden, layers=args.layers)
        lm = HFModel(str(folder), device="cpu", dtype="float32", batch_size=args.batch_size)
        recs = rows(args.rows)
        one_prompt = sum(len(lm.encode(r.rendered)) for r in recs[::4]) / args.rows
        result = {}
        for shared in (True, False):
            times = []
            for _ in range(args.repeats):
                lm.stats.forward_tokens = 0
                t0 = time.perf_counter()
                res = infer_ppl(lm, recs, shared_prefix=shared)
                times.append(time.perf_counter() - t0)
            result[shared] = (lm.stats.forward_tokens / args.rows, min(times), [r.prediction for r in res],
                              [r.ppl for r in res])
        s_tok, s_t, s_pred, s_ppl = result[True]
        n_tok, n_t, n_pred, n_ppl = result[False]
        max_diff = max(abs(a[k] - b[k]) for a, b in zip(s_ppl, n_ppl) for k in a)
        print(f"model: GPT-2 hidden={args.hidden} layers={args.layers}, CPU float32, batch {args.batch_size}; "
              f"{args.rows} rows x 4 labels, 5 shots")
        print(f"tokens in one label prompt (mean): {one_prompt:.1f}")
        print(f"shared-prefix: {s_tok:.1f} forward tokens/row ({s_tok / one_prompt:.2f}x one prompt), "
              f"{s_t * 1000:.1f} ms")
        print(f"naive:         {n_tok:.1f} forward tokens/row ({n_tok / one_prompt:.2f}x one prompt), "
              f"{n_t * 1000:.1f} ms")
        print(f"speed-up: {n_t / s_t:.2f}x wall, {n_tok / s_tok:.2f}x tokens; same choices: {s_pred == n_pred}; "
              f"max |PPL diff|: {max_diff:.2e}")


if __name__ == "__main__":
    main()
