"""Which checker handles which (suite, kind). Each checker module has ``check(case) -> Outcome``."""
from __future__ import annotations

import importlib
from typing import Any, Callable

CHECKERS: dict[tuple[str, str], str] = {
    ("opencompass", "icl"): "promptweave.conformance.icl",
    ("aisbench", "icl"): "promptweave.conformance.icl",
    ("aisbench", "multiturn"): "promptweave.conformance.multiturn",
    ("aisbench", "multimodal"): "promptweave.conformance.multimodal",
    ("lve", "lve"): "promptweave.conformance.lve_cases",
    ("lve", "lve-invalid"): "promptweave.conformance.lve_cases",
}

_loaded: dict[str, Callable[[dict[str, Any]], Any] | None] = {}


def checker_for(suite: str, kind: str) -> Callable[[dict[str, Any]], Any] | None:
    """The check function for a kind, or None where no checker exists yet."""
    modname = CHECKERS.get((suite, kind))
    if modname is None:
        return None
    if modname not in _loaded:
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name != modname:
                raise
            _loaded[modname] = None
        else:
            _loaded[modname] = getattr(mod, "check")
    return _loaded[modname]
