"""Points the bridge's tables at a fake reference package written by a test (shared by the bridge and index tests)."""
from __future__ import annotations

from typing import Any

from promptweave.compat import bridge


def point_bridge_at(monkeypatch: Any, pkg: str) -> None:
    """The bridge's registries and allow-listed export modules, as the real references lay them out, under ``pkg``."""
    monkeypatch.setattr(bridge, "_REGISTRIES", {
        fam: ((pkg, f"{pkg}.registry", reg),) for fam, reg in
        (("loader", "LOAD_DATASET"), ("evaluator", "ICL_EVALUATORS"), ("postprocessor", "TEXT_POSTPROCESSORS"),
         ("dict_postprocessor", "DICT_POSTPROCESSORS"))})
    monkeypatch.setattr(bridge, "_EXPORTS", {
        "loader": ((pkg, (f"{pkg}.datasets.base", "BaseDataset"), (f"{pkg}.datasets",)),),
        "evaluator": ((pkg, (f"{pkg}.evaluator.base", "BaseEvaluator"), (f"{pkg}.evaluator", f"{pkg}.datasets")),),
        "postprocessor": ((pkg, None, (f"{pkg}.datasets",)),),
        "dict_postprocessor": ((pkg, None, (f"{pkg}.datasets",)),),
    })
