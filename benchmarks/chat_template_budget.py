"""What the chat-template budgets cost: rendering through the budgeted environment vs jinja2's plain
ImmutableSandboxedEnvironment (the renderer before issue 22), same template, same messages, same run.

    python benchmarks/chat_template_budget.py [--messages 81] [--reps 200]

Prints ms per render and the ratio budgeted ÷ plain for a ChatML and a Llama-3 style template.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "report"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=81)
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from tiny_tokenizer import CHATML, LLAMA3

    from promptweave.render.jinja_budget import BudgetedEnvironment, render_budgeted

    msgs = [{"role": "system", "content": "Be brief."}] + [
        {"role": ("user", "assistant")[i % 2], "content": f"message {i} " * 20} for i in range(args.messages - 1)]
    variables = {"messages": msgs, "add_generation_prompt": True, "bos_token": "<s>", "tools": None,
                 "documents": None}
    for name, src in (("chatml", CHATML), ("llama3", LLAMA3)):
        plain = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(src)
        budgeted = BudgetedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(src)
        assert plain.render(**variables) == render_budgeted(budgeted, name, **variables)
        ratios, p_ms, b_ms = [], [], []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(args.reps):
                plain.render(**variables)
            a = time.perf_counter() - t
            t = time.perf_counter()
            for _ in range(args.reps):
                render_budgeted(budgeted, name, **variables)
            b = time.perf_counter() - t
            ratios.append(b / a)
            p_ms.append(a / args.reps * 1e3)
            b_ms.append(b / args.reps * 1e3)
        print(f"{name:7s} {args.messages} messages: plain {statistics.median(p_ms):.2f} ms, budgeted "
              f"{statistics.median(b_ms):.2f} ms per render; budgeted ÷ plain {statistics.median(ratios):.2f}× "
              f"(range {min(ratios):.2f}–{max(ratios):.2f})")


if __name__ == "__main__":
    main()
