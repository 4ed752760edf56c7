"""``lint --no-data`` over every dataset config shipped in the installed reference packages.

For each tree (``opencompass/configs/datasets/**`` of opencompass 0.5.4, ``ais_bench/benchmark/configs/datasets/**``
of ais_bench) every ``.py`` file is linted without its data, twice:

- **promptweave alone**: only promptweave's own registries (loaders, evaluators, postprocessors, forms);
- **with the reference installed**: as the user with the full reference package would see it. The registry
  bridge (``compat.bridge``) then serves a name from the reference's own registry. The references cannot be
  imported here (their dependencies are not installed), so the bridge is answered from a *static* reading of the
  reference source: a name counts as served only if a ``@<REGISTRY>.register_module()`` decorator (or a
  ``register_module(name=...)`` call) in the package registers exactly that name in the matching registry
  (``LOAD_DATASET``, ``ICL_EVALUATORS``, ``TEXT_POSTPROCESSORS``). Nothing is imported from the reference.

Files that define no datasets (helper lists such as ``mmlu_all_sets.py``) are counted apart, not in the share.
Failures are grouped by error code and by what failed (``unknown evaluator``, ...).

Run: ``python benchmarks/config_sweep.py [--json out.json] [--limit N]``; prints a Markdown table.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import re
import sys
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TREES = {
    "opencompass": ("opencompass", "configs/datasets"),
    "ais_bench": ("ais_bench", "benchmark/configs/datasets"),
}
# bridge family -> registry variable names in the references' sources
FAMILIES = {"loader": ("LOAD_DATASET",), "evaluator": ("ICL_EVALUATORS",), "postprocessor": ("TEXT_POSTPROCESSORS",)}
NO_DATASETS = "defines no datasets"


def package_root(pkg: str) -> Path | None:
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _registered_names(tree: ast.AST) -> dict[str, set[str]]:
    """``{registry variable: names}`` registered in one module, read from its syntax only."""
    out: dict[str, set[str]] = {}

    def reg_call(node: ast.AST) -> tuple[str, ast.Call] | None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "register_module" and isinstance(node.func.value, ast.Name):
            return node.func.value.id, node
        return None

    def names_of(call: ast.Call, default: str | None) -> list[str]:
        for kw in call.keywords:
            if kw.arg == "name":
                v = kw.value
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    return [v.value]
                if isinstance(v, (ast.List, ast.Tuple)):
                    return [e.value for e in v.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
            return [call.args[0].value]
        for kw in call.keywords:
            if kw.arg == "module" and isinstance(kw.value, ast.Name):
                return [kw.value.id]
        return [default] if default else []

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                got = reg_call(dec)
                if got:
                    out.setdefault(got[0], set()).update(names_of(got[1], node.name))
        elif isinstance(node, ast.Expr):
            got = reg_call(node.value)
            if got:
                out.setdefault(got[0], set()).update(names_of(got[1], None))
    return out


def static_registries(pkg: str) -> dict[str, set[str]]:
    """Every name each bridge family would find in ``pkg``'s registries (configs excluded)."""
    root = package_root(pkg)
    found: dict[str, set[str]] = {f: set() for f in FAMILIES}
    if root is None:
        return found
    for path in root.rglob("*.py"):
        if "configs" in path.relative_to(root).parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        for var, names in _registered_names(tree).items():
            for fam, variables in FAMILIES.items():
                if var in variables:
                    found[fam].update(names)
    return found


class _StaticRegistry:
    """Answers ``get(name)`` like a reference registry, from the static reading; the class is a stand-in."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def get(self, name: str) -> Any:
        if name not in self.names:
            return None

        def _init(self: Any, *a: Any, **k: Any) -> None:
            pass

        def _call(self: Any, *a: Any, **k: Any) -> Any:
            return a[0] if a else None

        return type(name, (), {"__init__": _init, "__call__": _call, "__module__": "reference (static)"})


@contextmanager
def reference_installed(registries: dict[str, dict[str, set[str]]]) -> Iterator[None]:
    """The bridge answers from the static registries of both references for the duration."""
    from promptweave.compat import bridge

    by_module = {}
    for family, entries in bridge._REGISTRIES.items():
        for package, module, attr in entries:
            by_module[(module, attr)] = _StaticRegistry(registries.get(package, {}).get(family, set()))
    saved = bridge._registry
    bridge._registry = lambda module, attr: by_module.get((module, attr))  # type: ignore[assignment]
    try:
        yield
    finally:
        bridge._registry = saved  # type: ignore[assignment]


_KIND = re.compile(r"\[(PW\d+)\][^:]*?(?::\s*[^:]*?)*?:\s*([a-z][^(;:]*?)(?:\s*\(got|;|$)")


def failure_kind(problem: str) -> str:
    """``PW600 unknown evaluator`` from a problem line (code + what failed, without the values)."""
    m = re.search(r"\[(PW\d+)\]", problem)
    code = m.group(1) if m else "PW000"
    rest = problem[m.end():] if m else problem
    rest = re.sub(r"\(got .*", "", rest)
    rest = rest.split("; expected")[0]
    # the message is the text after the last "field: " part
    parts = [p.strip() for p in rest.split(": ") if p.strip()]
    msg = parts[-1] if parts else rest
    msg = re.sub(r"'[^']*'|\"[^\"]*\"|\{[^}]*\}|\d+", "…", msg)[:70]
    return f"{code} {msg}"


def sweep_tree(pkg: str, sub: str, limit: int | None = None) -> dict[str, Any]:
    from promptweave.run.lint import lint_file

    root = package_root(pkg)
    if root is None:
        return {"installed": False}
    files = sorted(p for p in (root / sub).rglob("*.py") if p.name != "__init__.py")
    if limit:
        files = files[:limit]
    ok = 0
    helpers = 0
    kinds: Counter = Counter()
    failed: dict[str, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in files:
            rep = lint_file(path, no_data=True)
            if rep.ok:
                ok += 1
                continue
            first = rep.problems[0]
            if NO_DATASETS in first:
                helpers += 1
                continue
            kinds[failure_kind(first)] += 1
            failed[str(path.relative_to(root))] = first
    configs = len(files) - helpers
    return {"installed": True, "files": len(files), "dataset_configs": configs, "not_dataset_configs": helpers,
            "ok": ok, "share": ok / configs if configs else 0.0, "kinds": kinds.most_common(), "failed": failed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write every figure and failure here")
    ap.add_argument("--limit", type=int, help="only the first N files of each tree")
    ap.add_argument("--top", type=int, default=8, help="failure kinds shown per column")
    args = ap.parse_args()
    registries = {pkg: static_registries(pkg) for pkg in TREES}
    results: dict[str, Any] = {"static_registry_sizes": {p: {f: len(n) for f, n in r.items()}
                                                          for p, r in registries.items()}}
    start = time.perf_counter()
    for pkg, (name, sub) in TREES.items():
        alone = sweep_tree(name, sub, args.limit)
        with reference_installed(registries):
            installed = sweep_tree(name, sub, args.limit)
        results[pkg] = {"promptweave_alone": alone, "with_reference": installed}
    results["seconds"] = round(time.perf_counter() - start, 1)
    print("| tree | dataset configs | resolve with the reference installed | resolve with promptweave alone |")
    print("|---|---:|---:|---:|")
    for pkg in TREES:
        a, w = results[pkg]["promptweave_alone"], results[pkg]["with_reference"]
        if not a.get("installed"):
            print(f"| {pkg} | not installed | | |")
            continue
        print(f"| {pkg} | {a['dataset_configs']} | {w['ok']} ({100 * w['share']:.1f}%) | "
              f"{a['ok']} ({100 * a['share']:.1f}%) |")
    for pkg in TREES:
        for col in ("with_reference", "promptweave_alone"):
            r = results[pkg][col]
            if not r.get("installed"):
                continue
            print(f"\n{pkg}, {col.replace('_', ' ')}: top failure kinds")
            for kind, n in r["kinds"][:args.top]:
                print(f"  {n:5d}  {kind}")
    print(f"\n({results['seconds']}s; files defining no datasets, not counted: "
          + ", ".join(f"{p} {results[p]['promptweave_alone'].get('not_dataset_configs', 0)}" for p in TREES) + ")")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False, default=list))


if __name__ == "__main__":
    sys.exit(main())
