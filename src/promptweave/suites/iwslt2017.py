"""IWSLT 2017 (translation): its loader."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.hub import hf_dataset, map_rows


def iwslt2017(ctx: LoadContext, **kwargs: Any) -> Splits:
    """``load_dataset(**kwargs)`` with each row's ``translation`` dict spread into columns (and dropped)."""
    got = hf_dataset(ctx, **kwargs)

    def spread(row: dict[str, Any]) -> dict[str, Any]:
        tr = row.pop("translation", None) or {}
        return {**row, **tr}

    return map_rows(got, spread)


LOADERS = {
    "IWSLT2017Dataset": iwslt2017,
}
