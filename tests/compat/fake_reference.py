"""Points the bridge's tables at a fake reference package written by a test (shared by the bridge and index tests)."""
from __future__ import annotations

from typing import Any

from promptweave.compat import reference_tables


def point_bridge_at(monkeypatch: Any, pkg: str) -> None:
    """The bridge's registries and allow-listed export modules, as the real references lay them out, under ``pkg``
    (the package must lie in a ``site-packages`` folder on ``sys.path``: the bridge finds references only there).
    ``monkeypatch`` restores the real tables after the test."""
    registries = {fam: ((pkg, f"{pkg}.registry", reg),) for fam, reg in
                  (("loader", "LOAD_DATASET"), ("evaluator", "ICL_EVALUATORS"),
                   ("postprocessor", "TEXT_POSTPROCESSORS"), ("dict_postprocessor", "DICT_POSTPROCESSORS"))}
    exports = {
        "loader": ((pkg, (f"{pkg}.datasets.base", "BaseDataset"), (f"{pkg}.datasets",)),),
        "evaluator": ((pkg, (f"{pkg}.evaluator.base", "BaseEvaluator"), (f"{pkg}.evaluator", f"{pkg}.datasets")),),
        "postprocessor": ((pkg, None, (f"{pkg}.datasets",)),),
        "dict_postprocessor": ((pkg, None, (f"{pkg}.datasets",)),),
    }
    set_tables(monkeypatch, registries, exports)


def set_tables(monkeypatch: Any, registries: dict, exports: dict) -> None:
    for table, new in ((reference_tables.REGISTRIES, registries), (reference_tables.EXPORTS, exports)):
        for key in list(table):
            if key not in new:
                monkeypatch.delitem(table, key)
        for key, value in new.items():
            monkeypatch.setitem(table, key, value)
