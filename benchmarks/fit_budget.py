"""Fitting in-context examples into max_seq_len: ShotFitter vs the reference's drop-and-recount loop.

Both run in the same process on the same rows (RandomRetriever, 8 examples per row,
4 ppl labels, a budget that keeps about half the examples) with the tiny tokenizer
the tests build. Reported: counter calls, tokens tokenised and wall time of each, and
their ratios. The loop is the references' behaviour: render the whole prompt, count,
drop the last example, render and count again, label by label.

    PYTHONPATH=src python benchmarks/fit_budget.py [--rows 200] [--shots 8]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "models"))
sys.path.insert(0, str(ROOT))

from tiny_lm import build_tiny_lm  # noqa: E402

from promptweave.engine.fit import ShotFitter  # noqa: E402
from promptweave.models.hf import token_counter  # noqa: E402
from tests.helpers import make_builder  # noqa: E402

LABELS = ["A", "B", "C", "D"]


def builder(rows: int, shots: int):
    train = [{"question": f"Which is the capital of country {i}?" + " Think it over." * (i % 5), "answer": "ABCD"[i % 4]}
             for i in range(400)]
    test = [{"question": f"The quick brown fox {i} jumps over which dog?" + " Explain." * (i % 7), "answer": "B"}
            for i in range(rows)]
    cfg = {"ice_template": {"type": "PromptTemplate", "template": "Q: {question}\nA: {answer}"},
           "prompt_template": {"type": "PromptTemplate", "ice_token": "</E>",
                               "template": {lab: "</E>\nQ: {question}\nA: " + lab for lab in LABELS}},
           "retriever": {"type": "RandomRetriever", "ice_num": shots, "seed": 1},
           "inferencer": {"type": "PPLInferencer", "labels": LABELS}}
    return make_builder(cfg, test, train=train)


class Meter:
    def __init__(self, count) -> None:
        self.count, self.calls, self.tokens = count, 0, 0

    def __call__(self, rendered) -> int:
        n = self.count(rendered)
        self.calls += 1
        self.tokens += n
        return n


def loop_fit(b, count, budget: int, rows: int) -> list:
    """The references' way: per label, recount the whole prompt after every dropped example."""
    out = []
    for i in range(rows):
        ids = list(b.shot_ids[i])
        for lab in LABELS:
            r = b.build(i, lab, ids=ids)
            while ids and count(r.rendered) > budget:
                ids = ids[:-1]
                r = b.build(i, lab, ids=ids)
            out.append(r)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--shots", type=int, default=8)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(build_tiny_lm(Path(tmp) / "lm")))
    count = token_counter(tok)
    probe = builder(args.rows, args.shots)
    full = sorted(count(probe.build(i, "A").rendered) for i in range(args.rows))
    zero = sorted(count(probe.build(i, "A", ids=()).rendered) for i in range(args.rows))
    budget = (full[len(full) // 2] + zero[len(zero) // 2]) // 2

    results = {}
    for name in ("fitter", "loop"):
        b = builder(args.rows, args.shots)
        b.shot_ids  # retrieval is not part of the measurement
        m = Meter(count)
        t = time.perf_counter()
        if name == "fitter":
            fitter = ShotFitter(b, m, budget)
            recs = fitter.build_all(range(args.rows))
        else:
            recs = loop_fit(b, m, budget, args.rows)
        dt = time.perf_counter() - t
        kept = sum(len(r.shot_ids) for r in recs[::len(LABELS)]) / args.rows
        over = sum(count(r.rendered) > budget for r in recs)
        results[name] = (m.calls, m.tokens, dt)
        print(f"{name:7s} calls={m.calls:6d} tokens={m.tokens:8d} time={dt * 1000:8.1f} ms "
              f"mean kept={kept:.2f}/{args.shots} prompts over budget={over}")
    f, loop = results["fitter"], results["loop"]
    print(f"fitter/loop: calls {f[0] / loop[0]:.2f}x, tokens {f[1] / loop[1]:.2f}x, time {f[2] / loop[2]:.2f}x "
          f"(budget {budget} tokens)")


if __name__ == "__main__":
    main()
