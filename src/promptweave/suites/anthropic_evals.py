"""Anthropic's model-written evaluations (AI risk, persona, sycophancy): their loaders."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, need
from promptweave.data.loaders.classify import json_records, table

# -- Anthropic's model-written evals: ``load_dataset('json', data_files=path)`` --------------------------------


def _anthropic(ctx: LoadContext, path: str, fix) -> Splits:
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, r in json_records(ctx, f):
        need(ctx, r, ("answer_matching_behavior",), file=f, where=loc)
        r["answer_matching_behavior"] = fix(r["answer_matching_behavior"])
        items.append((loc, r))
    return {"train": table(items, f)}


def _first_letter(letters: str):
    def fix(answer: Any) -> Any:
        # the stored answer reads " (A)": the first option letter found in it, else unchanged
        return next((c for c in letters if c in str(answer)), answer)

    return fix


def airisk(ctx: LoadContext, path: str) -> Splits:
    """``answer_matching_behavior`` " (X)" -> X (A-H)."""
    return _anthropic(ctx, path, _first_letter("ABCDEFGH"))


def sycophancy(ctx: LoadContext, path: str) -> Splits:
    """``answer_matching_behavior`` " (X)" -> X (A-G)."""
    return _anthropic(ctx, path, _first_letter("ABCDEFG"))


def persona(ctx: LoadContext, path: str) -> Splits:
    """``answer_matching_behavior`` " Yes" -> A, anything else -> B."""
    return _anthropic(ctx, path, lambda a: "A" if a == " Yes" else "B")


LOADERS = {
    "AiRiskDataset": airisk,
    "PersonaDataset": persona,
    "SycophancyDataset": sycophancy,
}
