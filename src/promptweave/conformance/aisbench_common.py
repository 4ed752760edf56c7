"""Shared set-up for the AISBench multi-turn and multimodal checkers."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from promptweave.engine import DatasetSpec, ModelSpec


def with_ais_columns(rows: Sequence[Mapping[str, Any]], abbr: str, split: str) -> list[dict[str, Any]]:
    """AISBench adds ``subdivision`` (``<abbr>_<split>``) and ``idx`` to every row."""
    out = []
    for i, row in enumerate(rows):
        new = dict(row)
        new.setdefault("subdivision", f"{abbr}_{split}")
        new.setdefault("idx", i)
        out.append(new)
    return out


def specs(case: dict[str, Any]) -> tuple[DatasetSpec, ModelSpec]:
    abbr = case["dataset"].get("abbr", "dataset")
    test = with_ais_columns(case["test"], abbr, "test")
    train = test if case.get("train") is None else with_ais_columns(case["train"], abbr, "train")
    dataset = DatasetSpec.from_config(dict(case["dataset"]), train=train, test=test, file=case.get("id"),
                                      check_columns=False)
    m = case["model"]
    model = ModelSpec.from_config({"kind": m["kind"], "meta_template": m.get("meta_template"), "abbr": m["name"],
                                   "dialect": "aisbench"})
    return dataset, model
