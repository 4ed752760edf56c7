"""Where the installed references keep what the bridge may serve, and where they are installed.

The one place both ``compat.bridge`` (which imports reference modules) and ``compat.reference_index`` (which only
reads their source) take their tables from, so neither needs the other's internals:

- ``REGISTRIES``: per bridge family, the reference registries that hold its names;
- ``EXPORTS``: per family, the reference's base class and the modules that export the family's classes;
- ``package_root``: an installed reference's folder, looked up in the interpreter's install directories only
  (site-packages / dist-packages), never ``''``, the working directory or another folder on ``sys.path``: an
  ``opencompass/`` folder next to the user cannot stand in for the installed package.

Tests point the tables at a fake reference with :func:`set_tables` (restored by :func:`reset_tables`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

HIDE_ENV = "PROMPTWEAVE_NO_REFERENCE"

Registry = tuple[str, str, str]  # (package, module holding the registries, registry attribute)
Export = tuple[str, "tuple[str, str] | None", tuple[str, ...]]  # (package, base (module, attr) or None, modules)

_DEFAULT_REGISTRIES: dict[str, tuple[Registry, ...]] = {
    "loader": (("opencompass", "opencompass.registry", "LOAD_DATASET"),
               ("ais_bench", "ais_bench.benchmark.registry", "LOAD_DATASET")),
    "evaluator": (("opencompass", "opencompass.registry", "ICL_EVALUATORS"),
                  ("ais_bench", "ais_bench.benchmark.registry", "ICL_EVALUATORS")),
    "postprocessor": (("opencompass", "opencompass.registry", "TEXT_POSTPROCESSORS"),
                      ("ais_bench", "ais_bench.benchmark.registry", "TEXT_POSTPROCESSORS")),
    # a judge's ``dict_postprocessor`` (judge replies -> metrics); only OpenCompass has the registry
    "dict_postprocessor": (("opencompass", "opencompass.registry", "DICT_POSTPROCESSORS"),),
}

_DEFAULT_EXPORTS: dict[str, tuple[Any, ...]] = {
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

REGISTRIES: dict[str, tuple[Registry, ...]] = dict(_DEFAULT_REGISTRIES)
EXPORTS: dict[str, tuple[Any, ...]] = dict(_DEFAULT_EXPORTS)


def set_tables(registries: dict[str, tuple[Registry, ...]], exports: dict[str, tuple[Any, ...]]) -> None:
    """Replace the tables (tests: a fake reference laid out as the real ones)."""
    REGISTRIES.clear()
    REGISTRIES.update(registries)
    EXPORTS.clear()
    EXPORTS.update(exports)


def reset_tables() -> None:
    set_tables(dict(_DEFAULT_REGISTRIES), dict(_DEFAULT_EXPORTS))


def tables_for(package: str) -> dict[str, Any]:
    """The registry and export tables of ``package`` as plain JSON data (part of the index cache key)."""
    regs = {f: sorted(attr for pkg, _m, attr in entries if pkg == package) for f, entries in REGISTRIES.items()}
    exps = {f: [[list(base) if base else None, list(mods)] for pkg, base, mods in entries if pkg == package]
            for f, entries in EXPORTS.items()}
    return {"registries": regs, "exports": exps}


def registry_modules(package: str) -> list[str]:
    return list(dict.fromkeys(m for entries in REGISTRIES.values() for pkg, m, _a in entries if pkg == package))


def export_modules(package: str, family: str) -> list[str]:
    return [m for pkg, _base, mods in EXPORTS.get(family, ()) if pkg == package for m in mods]


def references_hidden() -> bool:
    """``PROMPTWEAVE_NO_REFERENCE`` set to anything but ``""``/``0``: act as if no reference were installed."""
    return os.environ.get(HIDE_ENV, "").strip() not in ("", "0")


def package_root(package: str) -> Path | None:
    """The folder of an installed top-level package, found in the interpreter's install directories only and
    without importing it (None when it is not installed there)."""
    if "." in package or not package.isidentifier():
        return None
    from promptweave.sandbox.imports import install_dirs

    for d in install_dirs():
        cand = d / package
        if (cand / "__init__.py").is_file():
            return cand.resolve()
    return None


def within(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


__all__ = ["EXPORTS", "HIDE_ENV", "REGISTRIES", "export_modules", "package_root", "references_hidden",
           "registry_modules", "reset_tables", "set_tables", "tables_for", "within"]
