"""CrowS-Pairs (social-bias sentence pairs) and its Chinese version: their loaders."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.classify import json_records, table
from promptweave.data.loaders.hub import hf_dataset, map_rows
from promptweave.data.sources import Split


def crowspairs_cn(ctx: LoadContext, path: str) -> Splits:
    """Chinese CrowS-Pairs JSONL as the test split; every ``label`` is A (the stereotypical sentence first)."""
    f = ctx.find(path, local_mode=True)
    return {"test": table(((loc, {**r, "label": "A"}) for loc, r in json_records(ctx, f)), f)}



def crowspairs_v2(ctx: LoadContext, **kwargs: Any) -> Splits:
    """CrowS-Pairs through ``load_dataset``; every row's ``label`` is 'A' (the stereotypical sentence first)."""

    def prep(row: dict[str, Any]) -> dict[str, Any]:
        row["label"] = "A"
        return row

    return map_rows(hf_dataset(ctx, **kwargs), prep)



# -- CrowS-Pairs (English) through load_dataset: every label 0 (the stereotypical sentence is the first choice) --


def crowspairs(ctx: LoadContext, **kwargs: Any) -> Splits:
    def zero(part: Split) -> Split:
        return Split([{**r, "label": 0} for r in part.rows], part.file, list(part.where))

    got = hf_dataset(ctx, **kwargs)
    return zero(got) if isinstance(got, Split) else {k: zero(v) for k, v in got.items()}


LOADERS = {
    "CrowspairsDatasetV2": crowspairs_v2,
    "CrowspairsDataset": crowspairs,
    "CrowspairsDatasetCN": crowspairs_cn,
}
