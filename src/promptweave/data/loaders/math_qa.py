"""Maths word problems and competition maths: MATH's JSON object, AIME JSONL, TheoremQA's CSV, OlympiadBench's
per-subset JSON (GSM8K is in ``suites/gsm8k.py``)."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    json_file,
    need,
    rows,
)
from promptweave.data.sources import Split


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox``) with balanced braces, as the reference extracts
    MATH solutions; None when there is none."""
    idx = text.rfind("\\boxed")
    if idx < 0:
        idx = text.rfind("\\fbox")
        if idx < 0:
            return None
    depth, end = 0, None
    for i in range(idx, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                end = i
                break
    if end is None:
        return None
    boxed = text[idx:end + 1]
    left = "\\boxed{"
    if not boxed.startswith(left) or not boxed.endswith("}"):
        return None
    return boxed[len(left):-1]


def math(ctx: LoadContext, path: str, file_name: str = "math.json", **_: Any) -> Splits:
    """``<path>/<file_name>``: a JSON object of id -> {problem, solution}; the solution becomes its last boxed
    answer; the same rows as train and test."""
    f = ctx.member(ctx.find(path), file_name)
    data = json_file(f)
    if not isinstance(data, dict):
        raise ctx.fail("MATH data must be a JSON object of id -> problem", file=f, value=type(data).__name__)
    items = []
    for key, item in data.items():
        need(ctx, item, ("problem", "solution"), file=f, where=f"[{key!r}]")
        items.append((f"[{key!r}]", {"problem": item["problem"], "solution": last_boxed(item["solution"])}))
    part = rows(items, f)
    return {"test": part, "train": Split(list(part.rows), part.file, list(part.where))}
