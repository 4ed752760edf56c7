"""OlympiadBench: its loader (per-subset JSON) and, in ``template.py``, the prompt template OpenCompass writes from
each row's values (``OlympiadBenchTemplate``, ``OlympiadBenchRawTemplate``)."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, need, rows
from promptweave.data.sources import Split


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


LOADERS = {
    "OlympiadBenchDataset": olympiadbench,
}
