"""PIQA (physical commonsense): its loaders (the three reference classes' row shapes)."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, need
from promptweave.data.loaders.choice import labelled_splits


def _first(text: str, upper: bool) -> str:
    return (text[:1].upper() if upper else text[:1].lower()) + text[1:]


def piqa(ctx: LoadContext, path: str) -> Splits:
    """``{train,dev}.jsonl`` + labels: ``label`` the integer as written, ``id`` dropped."""

    def convert(f, loc, row, label):
        row["label"] = label
        row.pop("id", None)
        return row

    return labelled_splits(ctx, path, convert)


def piqa_v3(ctx: LoadContext, path: str) -> Splits:
    """As PIQADataset, with the reference's casing: ``goal`` capitalised; both solutions capitalised when the goal
    ends in ``?`` or ``.``, else lower-cased at their first letter."""

    def convert(f, loc, row, label):
        need(ctx, row, ("goal", "sol1", "sol2"), file=f, where=loc)
        if not all(isinstance(row[k], str) and row[k] for k in ("goal", "sol1", "sol2")):
            raise ctx.fail("goal, sol1 and sol2 must be non-empty strings", file=f, where=loc)
        row["label"] = label
        row["goal"] = _first(row["goal"], True)
        upper = row["goal"].endswith(("?", "."))
        row["sol1"], row["sol2"] = _first(row["sol1"], upper), _first(row["sol2"], upper)
        row.pop("id", None)
        return row

    return labelled_splits(ctx, path, convert)


def piqa_v2(ctx: LoadContext, path: str) -> Splits:
    """``{train,dev}.jsonl`` + labels: ``answer`` A/B (NULL for a negative label), ``id`` dropped."""

    def convert(f, loc, row, label):
        row["answer"] = "NULL" if label < 0 else "AB"[label]
        row.pop("id", None)
        return row

    return labelled_splits(ctx, path, convert)


LOADERS = {
    "PIQADataset": piqa,
    "PIQADatasetV2": piqa_v2,
    "PIQADatasetV3": piqa_v3,
}
