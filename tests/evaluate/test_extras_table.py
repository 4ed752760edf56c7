"""Every optional package the code imports has an extra, and is checked at plan time.

The source is read with ``ast`` (nothing is imported): ``import x`` / ``from x import y`` anywhere (inside
functions and ``try`` blocks too), and calls naming a module by a literal or a module-level constant
(``importlib.import_module``, ``importlib.util.find_spec``, ``__import__``, ``need_package``). A top-level package
that is neither the standard library, nor one of pyproject's core dependencies, nor promptweave itself must be in
``promptweave.extras.EXTRAS`` (mapped to an extra pyproject declares) or in ``NOT_EXTRAS`` (with why). And each one
must be declared where planning sees it (a ``requires`` entry, a ``(module, extra)`` pair, a model backend's
``BACKEND_REQUIRES``, a data loader's ``missing_extra``), or be listed in ``CHECKED_ELSEWHERE`` below with why.
A new optional import without an entry fails here."""
from __future__ import annotations

import ast
import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from promptweave.extras import EXTRAS, NOT_EXTRAS

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "promptweave"
IMPORTERS = {"import_module", "find_spec", "__import__", "need_package"}
DIST_TO_MODULE = {"pyyaml": "yaml", "scikit-image": "skimage", "math-verify": "math_verify",
                  "presidio-analyzer": "presidio_analyzer", "rouge-score": "rouge_score",
                  "sentence-transformers": "sentence_transformers", "rouge-chinese": "rouge_chinese"}

# optional packages not declared to the plan-time check, and why that is right
CHECKED_ELSEWHERE = {
    "langdetect": "IFEval's language rules need it for the rows that use them only (most IFEval rows do not): such a "
                  "row is one typed PW640 naming promptweave[ifeval] when scored, never a guess",
    "ray": "an executor, not a task's need: --executor ray is refused (PW, 'promptweave[ray]') before any task runs",
    "tokenizers": "a speed-up only: without it token counts come from transformers (models/light_tokens.py)",
    "latex2sympy2_extended": "installed by math-verify and imported only where math_verify is required",
    "huggingface_hub": "installed by transformers and imported only where transformers is required (LVE's hf "
                       "checker)",
    "accelerate": "installed with the hf extra; imported only by transformers itself",
}


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _module_of(requirement: str) -> str:
    name = re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower()
    return DIST_TO_MODULE.get(name, name.replace("-", "_"))


def _constants(tree: ast.Module) -> dict[str, str]:
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value.value
    return out


def _imports(tree: ast.Module) -> list[tuple[str, int]]:
    consts = _constants(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Call) and node.args:
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else None
            arg = node.args[0]
            if name in IMPORTERS:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append((arg.value, node.lineno))
                elif isinstance(arg, ast.Name) and arg.id in consts:
                    found.append((consts[arg.id], node.lineno))
    return found


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _declared(tree: ast.Module, extras: set[str]) -> set[str]:
    """Module names a plan-time check sees: ``requires`` values, ``(module, extra)`` / ``(extra, module)`` pairs,
    ``BACKEND_REQUIRES`` and ``missing_extra(..., (modules,), ...)``."""
    out: set[str] = set()
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for t in targets:
            name = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else ""
            if name in ("requires", "BACKEND_REQUIRES"):
                out.update(_strings(value))
        if isinstance(node, ast.Tuple) and len(node.elts) == 2 and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            a, b = (e.value for e in node.elts)
            if b in extras:
                out.add(a)
            elif a in extras:
                out.add(b)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "missing_extra":
            for arg in node.args[1:2]:
                out.update(_strings(arg))
    return out


@lru_cache(maxsize=1)
def _scan():
    project = _pyproject()["project"]
    core = {_module_of(r) for r in project["dependencies"]}
    extras = set(project["optional-dependencies"])
    std = set(sys.stdlib_module_names)
    imported: dict[str, list[str]] = {}
    declared: set[str] = set()
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        declared |= _declared(tree, extras)
        for module, line in _imports(tree):
            top = module.split(".")[0]
            if top and top not in std and top not in core and top != "promptweave":
                imported.setdefault(top, []).append(f"{path.relative_to(ROOT)}:{line}")
    return project, imported, declared


def test_every_optional_import_maps_to_a_declared_extra():
    project, imported, _ = _scan()
    assert imported, "the scan found no optional import at all: it is broken"
    unmapped = {m: where for m, where in imported.items() if m not in EXTRAS and m not in NOT_EXTRAS}
    assert not unmapped, ("optional packages imported with no entry in promptweave.extras.EXTRAS (or NOT_EXTRAS, "
                          f"with why): {unmapped}")
    declared_extras = set(project["optional-dependencies"])
    assert not {m: e for m, e in EXTRAS.items() if e not in declared_extras}, "EXTRAS names an extra pyproject lacks"
    # and each extra really installs the module it is mapped to
    for module, extra in EXTRAS.items():
        if module in imported:
            provided = {_module_of(r) for r in project["optional-dependencies"][extra]}
            assert module in provided or module in CHECKED_ELSEWHERE, (module, extra, provided)


def test_no_stale_exemptions():
    _, imported, _ = _scan()
    assert set(NOT_EXTRAS) <= set(imported), set(NOT_EXTRAS) - set(imported)
    assert set(CHECKED_ELSEWHERE) - {"accelerate"} <= set(imported), set(CHECKED_ELSEWHERE) - set(imported)


def test_every_optional_import_is_checked_at_plan_time():
    _, imported, declared = _scan()
    unchecked = {m: where for m, where in imported.items()
                 if m in EXTRAS and m not in declared and m not in CHECKED_ELSEWHERE}
    assert not unchecked, ("optional packages imported but declared to no plan-time check (a `requires` entry, a "
                           f"model backend's BACKEND_REQUIRES, a loader's missing_extra): {unchecked}")
