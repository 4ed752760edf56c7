"""The long tail: a reference class by name, only when the user installed that reference.

A name is served in one of two ways, and no other:

1. **Registry name**: the name is registered in the reference's own registry for that family
   (``LOAD_DATASET``, ``ICL_EVALUATORS``, ``TEXT_POSTPROCESSORS``).
2. **Exported name**: many configs import a class straight from the reference
   (``from opencompass.datasets import NeedleBenchOriginDataset``) and OpenCompass builds it from the class object,
   never through a registry. Such a name is served when it is an attribute of one of the modules in ``_EXPORTS``
   for that family (a fixed list written here, never taken from a config) **and** it is of the family's kind: for
   loaders and evaluators a subclass of the reference's base class (``BaseDataset``, ``BaseEvaluator``), for
   postprocessors (text ones, and a judge's ``dict_postprocessor``) a plain function defined inside the reference
   package under that very name (a ``def``, not a lambda or an alias).

A config's dotted path is never imported: only the bare name is looked up, and only as an attribute of the
allow-listed modules, so a config cannot use the bridge to reach code the reference does not offer for that family.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
from functools import cache
from typing import Any

# family -> (package, module holding the registries, registry attribute)
_REGISTRIES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "loader": (("opencompass", "opencompass.registry", "LOAD_DATASET"),
               ("ais_bench", "ais_bench.benchmark.registry", "LOAD_DATASET")),
    "evaluator": (("opencompass", "opencompass.registry", "ICL_EVALUATORS"),
                  ("ais_bench", "ais_bench.benchmark.registry", "ICL_EVALUATORS")),
    "postprocessor": (("opencompass", "opencompass.registry", "TEXT_POSTPROCESSORS"),
                      ("ais_bench", "ais_bench.benchmark.registry", "TEXT_POSTPROCESSORS")),
    # a judge's ``dict_postprocessor`` (judge replies -> metrics); only OpenCompass has the registry
    "dict_postprocessor": (("opencompass", "opencompass.registry", "DICT_POSTPROCESSORS"),),
}

# family -> (package, base class as (module, attribute) or None for plain functions, modules that export the family)
_EXPORTS: dict[str, tuple[tuple[str, tuple[str, str] | None, tuple[str, ...]], ...]] = {
    "loader": (
        ("opencompass", ("opencompass.datasets.base", "BaseDataset"), ("opencompass.datasets",)),
        ("ais_bench", ("ais_bench.benchmark.datasets.base", "BaseDataset"), ("ais_bench.benchmark.datasets",)),
    ),
    "evaluator": (
        ("opencompass", ("opencompass.openicl.icl_evaluator.icl_base_evaluator", "BaseEvaluator"),
         ("opencompass.openicl.icl_evaluator", "opencompass.evaluator", "opencompass.datasets")),
        ("ais_bench", ("ais_bench.benchmark.openicl.icl_evaluator.icl_base_evaluator", "BaseEvaluator"),
         ("ais_bench.benchmark.openicl.icl_evaluator", "ais_bench.benchmark.datasets")),
    ),
    "postprocessor": (
        ("opencompass", None, ("opencompass.utils.text_postprocessors", "opencompass.datasets")),
        ("ais_bench", None, ("ais_bench.benchmark.utils.postprocess.text_postprocessors",
                             "ais_bench.benchmark.datasets")),
    ),
    "dict_postprocessor": (
        ("opencompass", None, ("opencompass.utils.dict_postprocessors", "opencompass.datasets")),
    ),
}


@cache
def _module(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except Exception:  # noqa: BLE001 - an installed but unusable reference (missing deps) counts as absent
        return None


@cache
def _registry(module: str, attr: str) -> Any:
    mod = _module(module)
    return None if mod is None else getattr(mod, attr, None)


def _exported(package: str, base: tuple[str, str] | None, modules: tuple[str, ...], name: str) -> Any:
    """``name`` as exported by one of ``modules``, if it is of the family's kind; else None."""
    if not name.isidentifier() or name.startswith("_"):
        return None
    base_cls = None
    if base is not None:
        base_cls = _registry(*base)
        if not isinstance(base_cls, type):
            return None
    for module in modules:
        mod = _module(module)
        if mod is None:
            continue
        obj = getattr(mod, name, None)
        if obj is None:
            continue
        if base_cls is not None:
            if isinstance(obj, type) and issubclass(obj, base_cls) and obj is not base_cls:
                return obj
        elif inspect.isfunction(obj) and obj.__name__ == name \
                and (getattr(obj, "__module__", "") or "").split(".")[0] == package:
            return obj
    return None


def reference_class(family: str, name: str) -> tuple[str, Any] | None:
    """``(package, class)`` an installed reference offers under ``name`` for ``family`` (see the module doc)."""
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
    for package, base, modules in _EXPORTS.get(family, ()):
        found = _exported(package, base, modules, name)
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
