"""MathBench: its loader (optionally circular) and answer postprocessor."""
from __future__ import annotations

import re

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.loaders.choice import circular_rows, numbered_options


def mathbench(ctx: LoadContext, path: str, name: str, with_circular: bool = True) -> Splits:
    """``<path>/<name>.jsonl``. Cloze subsets keep question/answer; single-choice ones become four rotated
    copies (answer ``<id>--<letter>--<pattern>``) with ``with_circular``, else one row with numbered options."""
    f = ctx.member(ctx.find(path, local_mode=True), f"{name}.jsonl")
    items = []
    for n, (loc, entry) in enumerate(jsonl(f)):
        need(ctx, entry, ("question", "answer"), file=f, where=loc)
        if "cloze" in name:
            items.append((loc, {"question": entry["question"].strip(), "answer": entry["answer"].strip()}))
        elif with_circular:
            items.extend(circular_rows(ctx, entry, n, f, loc))
        else:
            need(ctx, entry, ("options",), file=f, where=loc)
            items.append((loc, {"question": entry["question"].strip() + "\n" + numbered_options(entry["options"]),
                                "answer": entry["answer"].strip()}))
    return rows(items, f)


def mathbench_postprocess(text: str, name: str = "") -> str:
    ans = text
    lines = ans.split("答案是" if "_cn" in name else "The answer is")
    split = len(lines) != 1
    if split:
        ans = lines[1].strip()
    output = re.sub(r"(\d),(\d)", r"\1\2", ans)
    numbers = re.findall(r"-?\d*\.?/?\d+|\d+", output)
    if numbers:
        return numbers[0] if split else numbers[-1]
    return ans


LOADERS = {
    "MathBenchDataset": mathbench,
}
POSTPROCESSORS = {
    "mathbench_postprocess": mathbench_postprocess,
}
