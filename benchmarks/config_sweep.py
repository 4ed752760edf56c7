"""``lint --no-data`` over every dataset config shipped in the installed reference packages.

For each tree (``opencompass/configs/datasets/**`` of opencompass 0.5.4, ``ais_bench/benchmark/configs/datasets/**``
of ais_bench) every ``.py`` file is linted without its data, twice:

- **promptweave alone**: only promptweave's own registries (loaders, evaluators, postprocessors, forms);
- **with the reference installed**: as the user with the full reference package would see it. The registry
  bridge (``compat.bridge``) then serves a name from the reference's own registry. The references cannot be
  imported here (their dependencies are not installed), so the bridge is answered from a *static* reading of the
  reference source: a name counts as served only if a ``@<REGISTRY>.register_module()`` decorator (or a
  ``register_module(name=...)`` call) in the package registers exactly that name in the matching registry
  (``LOAD_DATASET``, ``ICL_EVALUATORS``, ``TEXT_POSTPROCESSORS``, ``DICT_POSTPROCESSORS``). The bridge's second rule (a name exported by
  one of its allow-listed modules, ``bridge._EXPORTS``, that is of the family's kind) is read statically too:

  * every module of the package (configs excluded) is parsed; its namespace is what it defines at top level
    (also inside top-level ``if``/``try``/``with`` blocks) plus what it imports by name (``from .x import A as B``,
    absolute or relative, resolved to the module and name that *define* it) plus its star imports (the other
    module's ``__all__`` if it has one, else its public names, as Python does); imports from outside the package
    are not followed, so such names are not counted;
  * a class is of the kind when one of its bases, resolved in its module's namespace, is the family's base class
    (``BaseDataset`` in ``<pkg>.datasets.base``, ``BaseEvaluator`` in ``...icl_base_evaluator``) or a class of the
    package that is (transitively); a postprocessor is a top-level ``def`` of the package exported under its own
    name;
  * what the real import would do differently is not seen: names set by assignment, ``importlib``/``__getattr__``
    tricks, and modules that fail to import for lack of a dependency (the sweep assumes the full package works).

  Nothing is imported from the reference.

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
FAMILIES = {"loader": ("LOAD_DATASET",), "evaluator": ("ICL_EVALUATORS",), "postprocessor": ("TEXT_POSTPROCESSORS",),
            "dict_postprocessor": ("DICT_POSTPROCESSORS",)}
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


Origin = tuple[str, str]  # (defining module, name)


class _StaticPackage:
    """Module namespaces, class bases and functions of one reference package, from its syntax only."""

    def __init__(self, pkg: str) -> None:
        self.pkg = pkg
        self.files: dict[str, Path] = {}
        root = package_root(pkg)
        if root is not None:
            for path in root.rglob("*.py"):
                rel = path.relative_to(root.parent).with_suffix("")
                if "configs" in rel.parts:
                    continue
                parts = list(rel.parts)
                if parts[-1] == "__init__":
                    parts.pop()
                self.files[".".join(parts)] = path
        self._trees: dict[str, ast.Module | None] = {}
        self._ns: dict[str, dict[str, Origin]] = {}
        self._kind: dict[tuple[Origin, Origin], bool] = {}

    def tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            path = self.files.get(module)
            try:
                self._trees[module] = ast.parse(path.read_text(encoding="utf-8", errors="replace")) if path else None
            except SyntaxError:
                self._trees[module] = None
        return self._trees[module]

    @staticmethod
    def _top(body: list[ast.stmt]) -> Iterator[ast.stmt]:
        for node in body:
            yield node
            if isinstance(node, (ast.If, ast.Try, ast.With)):
                for sub in ("body", "orelse", "finalbody"):
                    yield from _StaticPackage._top(getattr(node, sub, []) or [])
                for h in getattr(node, "handlers", []):
                    yield from _StaticPackage._top(h.body)

    def _absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = module.split(".")
        if self.files.get(module, Path()).name != "__init__.py":
            base = base[:-1]
        base = base[:len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def namespace(self, module: str) -> dict[str, Origin]:
        """``{name: (defining module, name)}`` visible as attributes of ``module``."""
        if module in self._ns:
            return self._ns[module]
        ns: dict[str, Origin] = {}
        self._ns[module] = ns  # an import cycle sees what was read so far, as Python does
        tree = self.tree(module)
        for node in self._top(tree.body if tree else []):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                ns[node.name] = (module, node.name)
            elif isinstance(node, ast.ImportFrom):
                src = self._absolute(module, node)
                if src.split(".")[0] != self.pkg:
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        ns.update(self.public(src))
                    elif f"{src}.{alias.name}" in self.files:  # a submodule: (its name, "")
                        ns[alias.asname or alias.name] = (f"{src}.{alias.name}", "")
                    else:
                        ns[alias.asname or alias.name] = self.namespace(src).get(alias.name, (src, alias.name))
        return ns

    def public(self, module: str) -> dict[str, Origin]:
        ns = self.namespace(module)
        tree = self.tree(module)
        for node in self._top(tree.body if tree else []):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                    for t in node.targets) \
                    and isinstance(node.value, (ast.List, ast.Tuple)):
                names = {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
                return {k: v for k, v in ns.items() if k in names}
        return {k: v for k, v in ns.items() if not k.startswith("_")}

    def definition(self, origin: Origin) -> ast.AST | None:
        tree = self.tree(origin[0])
        for node in self._top(tree.body if tree else []):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == origin[1]:
                return node
        return None

    def is_kind(self, origin: Origin, base: Origin | None) -> bool:
        """A subclass of ``base`` (transitively), or for ``base`` None a top-level function of the package."""
        node = self.definition(origin)
        if base is None:
            return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        key = (origin, base)
        if key in self._kind:
            return self._kind[key]
        self._kind[key] = False
        ok = False
        if isinstance(node, ast.ClassDef) and origin != base:
            ns = self.namespace(origin[0])
            for b in node.bases:
                if isinstance(b, ast.Name):
                    got = ns.get(b.id)
                elif isinstance(b, ast.Attribute) and isinstance(b.value, ast.Name):
                    mod = ns.get(b.value.id)  # ``module.Class``: the class as the submodule names it
                    got = self.namespace(mod[0]).get(b.attr) if mod and not mod[1] else None
                else:
                    got = None
                if got is not None and (got == base or self.is_kind(got, base)):
                    ok = True
                    break
        self._kind[key] = ok
        return ok

    def exported(self, base: Origin | None, modules: tuple[str, ...]) -> set[str]:
        """Names the bridge's export rule would serve from ``modules``."""
        out: set[str] = set()
        for module in modules:
            for name, origin in self.namespace(module).items():
                if not name.startswith("_") and self.is_kind(origin, base) and (base or origin[1] == name):
                    out.add(name)
        return out


def static_exports(pkg: str) -> dict[tuple[str, tuple[str, ...]], set[str]]:
    """``{(family, allow-listed modules): names}`` the bridge's export rule serves from ``pkg``."""
    from promptweave.compat import bridge

    sp = _StaticPackage(pkg)
    out = {}
    for family, entries in bridge._EXPORTS.items():
        for package, base, modules in entries:
            if package == pkg:
                out[(family, modules)] = sp.exported(base, modules)
    return out


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
def reference_installed(registries: dict[str, dict[str, set[str]]],
                        exports: dict[str, dict[tuple[str, tuple[str, ...]], set[str]]] | None = None,
                        ) -> Iterator[None]:
    """The bridge answers from the static registries and exports of both references for the duration."""
    from promptweave.compat import bridge

    by_module = {}
    for family, entries in bridge._REGISTRIES.items():
        for package, module, attr in entries:
            by_module[(module, attr)] = _StaticRegistry(registries.get(package, {}).get(family, set()))
    by_modules: dict[tuple[str, tuple[str, ...]], _StaticRegistry] = {}
    for package, found in (exports or {}).items():
        for (_family, modules), names in found.items():
            by_modules[(package, modules)] = _StaticRegistry(names)

    def exported(package: str, base: Any, modules: tuple[str, ...], name: str) -> Any:
        reg = by_modules.get((package, modules))
        return reg.get(name) if reg else None

    saved = bridge._registry, bridge._exported
    bridge._registry = lambda module, attr: by_module.get((module, attr))  # type: ignore[assignment]
    bridge._exported = exported  # type: ignore[assignment]
    try:
        yield
    finally:
        bridge._registry, bridge._exported = saved  # type: ignore[assignment]


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
    exports = {pkg: static_exports(pkg) for pkg in TREES}
    results: dict[str, Any] = {"static_registry_sizes": {p: {f: len(n) for f, n in r.items()}
                                                          for p, r in registries.items()},
                               "static_export_sizes": {p: {f"{f} from {', '.join(m)}": len(n)
                                                           for (f, m), n in e.items()}
                                                       for p, e in exports.items()}}
    start = time.perf_counter()
    for pkg, (name, sub) in TREES.items():
        alone = sweep_tree(name, sub, args.limit)
        with reference_installed(registries, exports):
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
