"""Maths word problems and competition maths: GSM8K's split files, MATH's JSON object, AIME JSONL,
TheoremQA's CSV, OlympiadBench's per-subset JSON."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    json_file,
    jsonl,
    need,
    rows,
)
from promptweave.data.sources import Split, read_hf_named


def gsm8k(ctx: LoadContext, path: str) -> Splits:
    """``<path>/train.jsonl`` and ``<path>/test.jsonl``, rows as stored (question / answer)."""
    splits = ("train", "test")
    out = {}
    for split, f in zip(splits, ctx.files(path, [f"{s}.jsonl" for s in splits])):
        out[split] = rows(((loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)), f)
    return out


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


def aime2024(ctx: LoadContext, path: str, **_: Any) -> Splits:
    """JSONL with ``origin_prompt`` and ``gold_answer``, copied to ``question`` and ``answer``."""
    f = ctx.find(path)
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, ("origin_prompt", "gold_answer"), file=f, where=loc)
        row = dict(line)
        row["question"], row["answer"] = line["origin_prompt"], line["gold_answer"]
        items.append((loc, row))
    return rows(items, f)


def theoremqa(ctx: LoadContext, path: str) -> Splits:
    """One CSV read by ``datasets``' csv builder (so column types are inferred the same way) as the test split."""
    f = ctx.find(path, local_mode=True)
    return read_hf_named("csv", data_files={"test": str(f)})


def olympiadbench(ctx: LoadContext, path: str, name: str | None = None, **_: Any) -> Splits:
    """``<path>/<name>.json``: a list of problems; the first final answer is the solution."""
    if name is None:
        raise ctx.fail("OlympiadBenchDataset needs name (the subset file, e.g. 'OE_TO_maths_en_COMP')",
                       where="name")
    f = ctx.member(ctx.find(path), f"{name}.json")
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("OlympiadBench data must be a JSON list", file=f)
    keys = ("language", "subject", "question_type", "answer_type", "is_multiple_answer", "unit", "error")
    items = []
    for i, item in enumerate(data):
        need(ctx, item, ("question", "final_answer", *keys), file=f, where=f"[{i}]")
        items.append((f"[{i}]", {"problem": item["question"], "solution": item["final_answer"][0],
                                 **{k: item[k] for k in keys}, "questions": item}))
    part = rows(items, f)
    return {"test": part, "train": Split(list(part.rows), part.file, list(part.where))}


def matbench(ctx: LoadContext, path: str, task: str) -> Splits:
    """``<path>/matbench_base_fold_0_<task>_test.json``: a list of {problem, answer}."""
    f = ctx.member(ctx.find(path), f"matbench_base_fold_0_{task}_test.json")
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list", file=f)
    items = []
    for i, it in enumerate(data):
        need(ctx, it, ("problem", "answer"), file=f, where=f"[{i}]")
        items.append((f"[{i}]", {"problem": it["problem"], "answer": it["answer"]}))
    return rows(items, f)


def phybench(ctx: LoadContext, path: str) -> Splits:
    """``<path>/PHYBench-fullques_v1.json``: content -> input, answer -> target."""
    f = ctx.member(ctx.find(path), "PHYBench-fullques_v1.json")
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list", file=f)
    items = []
    for i, it in enumerate(data):
        need(ctx, it, ("content", "answer"), file=f, where=f"[{i}]")
        items.append((f"[{i}]", {"input": it["content"], "target": it["answer"]}))
    return rows(items, f)


def theoremqa_v3(ctx: LoadContext, path: str) -> Splits:
    """A JSON list of problems (a local path), ``Answer`` turned into text."""
    f = ctx.find(path, local_mode=True)
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list", file=f)
    items = []
    for i, it in enumerate(data):
        row = dict(need(ctx, it, ("Answer",), file=f, where=f"[{i}]"))
        row["Answer"] = str(row["Answer"])
        items.append((f"[{i}]", row))
    return rows(items, f)
