"""Question sets whose reference loader reshapes each record once: CMO fill-in-the-blank, ChemExam (sub-questions
folded into one prompt), LiveStemBench (options appended, optional seeded sample), QASPER (one row per answered
question over the paper's full text), MMLU-CF (dev / val splits of one subject renamed to ``input`` / ``target``) and
Omni-MATH (its hub copy's test split).
Their scoring is already native (MATHEvaluator, the LLM judge postprocessors, TriviaQAEvaluator,
AccwithDetailsEvaluator).
"""
from __future__ import annotations

import random
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, jsonl, need
from promptweave.data.loaders.classify import table
from promptweave.data.sources import Split, read_hf_named


def cmo_fib(ctx: LoadContext, path: str) -> Splits:
    """CMO JSONL: ``question`` = ``origin_prompt``, ``answer`` = ``gold_answer``."""
    f = ctx.find(path)
    items = []
    for loc, r in jsonl(f):
        row = dict(need(ctx, r, ("origin_prompt", "gold_answer"), file=f, where=loc))
        row["question"], row["answer"] = row["origin_prompt"], row["gold_answer"]
        items.append((loc, row))
    return table(items, f)


def chem_exam(ctx: LoadContext, path: str) -> Splits:
    """ChemExam JSONL: the question with each sub-question (and sub-sub-question) appended as ``Qi`` / ``Qi.j``
    lines into ``prompt``, their answers as ``Ai`` / ``Ai.j`` lines into ``output``; ``qa_type`` lists the leaves'
    types as text."""
    f = ctx.find(path)
    items = []
    for loc, r in jsonl(f):
        need(ctx, r, ("id", "question", "has_img"), file=f, where=loc)
        prompt, output, types = r["question"], "", []
        if "sub_question" in r:
            for i, sub in enumerate(r["sub_question"], 1):
                need(ctx, sub, ("question",), file=f, where=f"{loc}.sub_question[{i - 1}]")
                prompt += f"\nQ{i}: {sub['question']}"
                if "sub_question" in sub:
                    for j, leaf in enumerate(sub["sub_question"], 1):
                        need(ctx, leaf, ("question", "answer", "qa_type"), file=f, where=f"{loc} Q{i}.{j}")
                        prompt += f"\nQ{i}.{j}: {leaf['question']}"
                        output += f"\nA{i}.{j}: {leaf['answer']}"
                        types.append(leaf["qa_type"])
                else:
                    need(ctx, sub, ("answer", "qa_type"), file=f, where=f"{loc} Q{i}")
                    output += f"\nA{i}: {sub['answer']}"
                    types.append(sub["qa_type"])
        else:
            need(ctx, r, ("answer", "qa_type"), file=f, where=loc)
            output = r["answer"]
            types.append(r["qa_type"])
        items.append((loc, {"id": r["id"], "prompt": prompt, "output": output, "has_img": r["has_img"],
                            "qa_type": [str(t) for t in types]}))
    return table(items, f)


def livestembench(ctx: LoadContext, path: str, num_examples: int | None = None, n_repeats: int = 1,
                  version: str = "livestembench-20241227", **_: Any) -> Splits:
    """``<path>/<version>.json``: ``question`` with the options on following lines, ``answer``; ``num_examples``
    samples rows with seed 0; rows repeated ``n_repeats`` times; the same rows as train and test."""
    f = ctx.member(ctx.find(path), f"{version}.json")
    data = json_file(f)
    if not isinstance(data, list):
        raise ctx.fail("expected a JSON list of questions", file=f)
    picked = []
    for i, r in enumerate(data):
        need(ctx, r, ("question", "answer", "options"), file=f, where=f"[{i}]")
        q = r["question"] + "\n" + "\n".join(r["options"]) if len(r["options"]) > 0 else r["question"]
        picked.append((f"[{i}]", {"question": q, "answer": r["answer"]}))
    if num_examples:
        if n_repeats != 1:
            raise ctx.fail("n_repeats is only supported without num_examples", where="n_repeats", value=n_repeats)
        picked = random.Random(0).sample(picked, num_examples)
    picked = picked * int(n_repeats)
    one = table(picked, f)
    return {"train": one, "test": Split(list(one.rows), one.file, list(one.where))}


def omni_math(ctx: LoadContext) -> Splits:
    """Omni-MATH's test split, by its hub name from the local Hugging Face cache (the reference takes no path)."""
    got = read_hf_named("KbsdJames/Omni-MATH")
    if not isinstance(got, dict) or "test" not in got:
        raise ctx.fail("the cached KbsdJames/Omni-MATH dataset has no test split", file="KbsdJames/Omni-MATH")
    return got["test"]


CLASSES = {
    "OmniMathDataset": omni_math,
    "CMOFibDataset": cmo_fib,
    "ChemExamDataset": chem_exam,
    "LiveStemBenchDataset": livestembench,
}
"""The reference's loader class names this module reads (compat/loaders.py registers them in one line)."""
