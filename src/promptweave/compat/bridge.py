"""The long tail: a reference class by its registry name, only when the user installed that reference.

Only names found in the reference's own registries are returned, never an arbitrary dotted path, so a config
cannot use this to reach code the reference does not register for that purpose.
"""
from __future__ import annotations

import importlib
import importlib.util
from functools import lru_cache
from typing import Any

# family -> (package, module holding the registries, registry attribute)
_REGISTRIES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "loader": (("opencompass", "opencompass.registry", "LOAD_DATASET"),
               ("ais_bench", "ais_bench.benchmark.registry", "LOAD_DATASET")),
    "evaluator": (("opencompass", "opencompass.registry", "ICL_EVALUATORS"),
                  ("ais_bench", "ais_bench.benchmark.registry", "ICL_EVALUATORS")),
    "postprocessor": (("opencompass", "opencompass.registry", "TEXT_POSTPROCESSORS"),
                      ("ais_bench", "ais_bench.benchmark.registry", "TEXT_POSTPROCESSORS")),
}


@lru_cache(maxsize=None)
def _registry(module: str, attr: str) -> Any:
    try:
        mod = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - an installed but unusable reference (missing deps) counts as absent
        return None
    return getattr(mod, attr, None)


def reference_class(family: str, name: str) -> tuple[str, Any] | None:
    """``(package, class)`` registered under ``name`` in an installed reference, else None."""
    for package, module, attr in _REGISTRIES.get(family, ()):
        reg = _registry(module, attr)
        if reg is None:
            continue
        try:
            found = reg.get(name)
        except Exception:  # noqa: BLE001 - a registry that fails to resolve a name has no such name
            found = None
        if found is not None:
            return package, found
    return None


def installed_references() -> list[str]:
    """Reference packages importable here (their registries may still be unusable without their dependencies)."""
    out = []
    for pkg in ("opencompass", "ais_bench"):
        try:
            importlib.util.find_spec(pkg)  # type: ignore[attr-defined]
        except (ImportError, ValueError):
            continue
        if importlib.util.find_spec(pkg) is not None:  # type: ignore[attr-defined]
            out.append(pkg)
    return out
