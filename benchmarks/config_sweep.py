"""``lint --no-data`` over every dataset config shipped in the installed reference packages.

For each tree (``opencompass/configs/datasets/**`` of opencompass 0.5.4, ``ais_bench/benchmark/configs/datasets/**``
of ais_bench) every ``.py`` file is linted without its data, twice, through the product's own code (nothing is
patched):

- **with the reference installed**: as ``promptweave lint --no-data`` answers on this machine. The references are
  installed here without their dependencies (``pip install --no-deps``), so the bridge answers from the product's
  static index of the reference source (``compat.reference_index``): a name the reference registers or exports
  for the family is accepted with a warning (``run`` needs the reference's dependencies to use it);
- **promptweave alone**: the same with ``PROMPTWEAVE_NO_REFERENCE=1``, which hides the installed references.

Files that define no datasets (helper lists such as ``mmlu_all_sets.py``) are counted apart, not in the share.
Failures are grouped by error code and by what failed (``unknown evaluator``, ...). A failure is also marked
**broken in the reference too** (still counted in the denominator) when OpenCompass itself could not load the
config: a ``read_base`` import that names no file (PW140), or a name its base file never defines
(``apps_mini_gen.py`` asks ``apps_mini_gen_c7893a.py`` for ``APPS_datasets``, which defines ``APPS_mini_datasets``:
mmengine's lazy import raises KeyError); a class/function name that the installed reference
defines nowhere (e.g. ``deprecated_humaneval_*`` configs importing a ``humaneval_postprocess`` that 0.5.4 dropped);
a ``reader_cfg`` that is not a dict (``PJExam``: a trailing comma makes it a tuple, which the reference's
``BaseDataset`` unpacks with ``**``); a ``PromptTemplate`` given ``prompt=`` instead of ``template=`` (its
constructor takes no ``prompt``).

**In the environment OpenCompass users have** (opencompass installed with its dependencies, promptweave installed
into it): when ``$PROMPTWEAVE_OC_FULL_VENV`` (else ``.venvs/oc-full`` in the checkout, built by
``tools/build_reference_venvs.sh``) holds such a venv, the OpenCompass row
gets a third figure, ``lint --no-data`` of each config *alone in a fresh process* there
(``benchmarks/oc_full_sweep.py``, run with that venv's interpreter; ``--full-env-json FILE...`` reads finished or
partial runs instead of starting one, merged with later files winning, ``--full-env-limit N`` samples N configs),
with its agreement with OpenCompass's own loadability: exit 0 where OpenCompass loads the config, one typed
refusal where it cannot.

Run: ``python benchmarks/config_sweep.py [--json out.json] [--limit N]``; prints a Markdown table.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import time
import warnings
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from promptweave.compat.reference_index import HIDE_ENV, package_root

TREES = {
    "opencompass": ("opencompass", "configs/datasets"),
    "ais_bench": ("ais_bench", "benchmark/configs/datasets"),
}
NO_DATASETS = "defines no datasets"


@cache
def defined_names(pkg: str) -> frozenset[str]:
    """Every class, function, assigned or registered name anywhere in ``pkg``'s source (configs excluded)."""
    from promptweave.compat.reference_index import StaticPackage, registrations

    root = package_root(pkg)
    if root is None:
        return frozenset()
    sp = StaticPackage(pkg, root)
    out: set[str] = set()
    for module in sp.files:
        tree = sp.tree(module)
        if tree is None:
            continue
        out.update(n for _var, n, _kind in registrations(tree))
        for node in ast.walk(tree):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                out.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, ast.alias):
                out.add(node.asname or node.name.split(".")[-1])
    return frozenset(out)


_GOT = re.compile(r"\(got '([A-Za-z_][\w]*)'\)")


@cache
def _static_package(pkg: str) -> Any:
    from promptweave.compat.reference_index import StaticPackage

    root = package_root(pkg)
    return StaticPackage(pkg, root) if root is not None else None


def _missing_import(pkg: str, config: Path | None, name: str) -> str | None:
    """``from M import name`` in ``config`` where ``M`` (a module of ``pkg``) defines no ``name``: the reference's
    own import of the config fails there (ImportError)."""
    sp = _static_package(pkg)
    if config is None or sp is None:
        return None
    try:
        tree = ast.parse(config.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module and not node.level
                and node.module.split(".")[0] == pkg and any(a.name == name for a in node.names)):
            continue
        module = node.module
        if module not in sp.files or f"{module}.{name}" in sp.files or name in sp.namespace(module):
            return None
        mtree = sp.tree(module)
        assigned = {t.id for n in ast.walk(mtree) if isinstance(n, (ast.Assign, ast.AnnAssign))
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)} \
            if mtree else set()
        if name in assigned or any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
                                   and (n.level or (n.module or "").split(".")[0] != pkg)
                                   and sp._absolute(module, n) not in sp.files
                                   for n in ast.walk(mtree or ast.Module(body=[], type_ignores=[]))):
            return None  # set by assignment, or a star import the reading cannot follow: not known missing
        return f"the config imports {name!r} from {module}, which does not define it (ImportError)"
    return None


_DEFINES_NO = re.compile(r"\[PW140\] (?P<importer>[^:]+\.py):(?P<line>\d+): (?P<target>[^ ]+\.py) defines no "
                         r"'(?P<name>[A-Za-z_]\w*)'")


def _bound_names(tree: ast.Module) -> set[str] | None:
    """Every name a module's top level can bind when run, or None when a star import makes that unknowable."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name == "*":
                    return None
                out.add(a.asname or a.name.split(".")[0])
    return out


def _undefined_base_name(problem: str) -> str | None:
    """``with read_base(): from .x import NAME`` where ``x.py`` binds no ``NAME`` anywhere: mmengine's lazy import
    looks the name up in the base file's variables and raises KeyError (plain Python: ImportError)."""
    m = _DEFINES_NO.search(problem)
    if m is None:
        return None
    importer = Path(m.group("importer"))
    try:
        tree = ast.parse(importer.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.lineno == int(m.group("line")) and node.level
                and node.module and any(a.name == m.group("name") for a in node.names)):
            continue
        base = importer.parent
        for _ in range(node.level - 1):
            base = base.parent
        target = base.joinpath(*node.module.split(".")).with_suffix(".py")
        if target.name != m.group("target"):
            return None
        try:
            bound = _bound_names(ast.parse(target.read_text(encoding="utf-8", errors="replace")))
        except (OSError, SyntaxError, ValueError):
            return None
        if bound is None or m.group("name") in bound:
            return None
        return (f"a read_base import asks {target.name} for {m.group('name')!r}, which it never defines "
                "(mmengine's lazy import raises KeyError)")
    return None


def broken_in_reference(pkg: str, problem: str, config: Path | None = None) -> str | None:
    """Why the reference itself could not load the config behind ``problem``, or None."""
    if "[PW140]" in problem and "names no file" in problem:
        return "a read_base import names no file in the reference's own tree"
    if "[PW140]" in problem and " defines no " in problem:
        return _undefined_base_name(problem)
    if "[PW100]" in problem and "reader_cfg must be a dict" in problem:
        return "reader_cfg is not a dict: the reference's BaseDataset unpacks it with ** (TypeError)"
    if "[PW110]" in problem and "prompt_template" in problem and "missing 'template'" in problem:
        return "the prompt_template gives no template=: the reference's PromptTemplate requires it (TypeError)"
    m = _GOT.search(problem)
    if m and re.search(r"\[PW(600|610|220)\][^;]*unknown|has no native implementation", problem):
        if m.group(1) not in defined_names(pkg):
            return f"{m.group(1)!r} is defined nowhere in the installed {pkg}"
        return _missing_import(pkg, config, m.group(1))
    return None


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


def sweep_tree(pkg: str, sub: str, limit: int | None = None, root: Path | None = None) -> dict[str, Any]:
    from promptweave.run.lint import lint_file

    root = root or package_root(pkg)
    if root is None:
        return {"installed": False}
    files = sorted(p for p in (root / sub).rglob("*.py") if p.name != "__init__.py")
    if limit:
        files = files[:limit]
    ok = 0
    helpers = 0
    kinds: Counter = Counter()
    failed: dict[str, str] = {}
    broken: dict[str, str] = {}
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
            rel = str(path.relative_to(root))
            failed[rel] = first
            why = broken_in_reference(pkg, first, path)
            if why:
                broken[rel] = why
    configs = len(files) - helpers
    return {"installed": True, "files": len(files), "dataset_configs": configs, "not_dataset_configs": helpers,
            "ok": ok, "share": ok / configs if configs else 0.0, "kinds": kinds.most_common(), "failed": failed,
            "broken_in_reference": broken}


def sweep_alone(pkg: str, sub: str, limit: int | None = None) -> dict[str, Any]:
    """The sweep with the installed references hidden (``PROMPTWEAVE_NO_REFERENCE=1``)."""
    old = os.environ.get(HIDE_ENV)
    os.environ[HIDE_ENV] = "1"
    try:
        return sweep_tree(pkg, sub, limit, root=package_root(pkg))
    finally:
        if old is None:
            os.environ.pop(HIDE_ENV, None)
        else:
            os.environ[HIDE_ENV] = old


FULL_ENV_VENV = "PROMPTWEAVE_OC_FULL_VENV"


def full_env_python() -> Path | None:
    root = Path(os.environ.get(FULL_ENV_VENV) or Path(__file__).resolve().parents[1] / ".venvs" / "oc-full")
    py = root / "bin" / "python"
    return py if py.is_file() else None


def full_env_results(json_files: list[Path] | None, limit: int | None) -> dict[str, Any] | None:
    """The full-environment sweep: read from ``json_files`` (finished runs, or the ``.partial.jsonl`` of one
    still going or stopped early; several are merged, a later file's result for a config replacing an earlier
    one's, e.g. a run over the files an earlier sample left out and over that sample's failures), else run
    ``oc_full_sweep.py`` with the full venv's interpreter."""
    if not json_files:
        py = full_env_python()
        if py is None:
            return None
        import subprocess
        import tempfile

        json_file = Path(tempfile.mkdtemp(prefix="pw-sweep-")) / "oc_full.json"
        cmd = [str(py), str(Path(__file__).with_name("oc_full_sweep.py")), "--json", str(json_file)]
        subprocess.run(cmd + (["--limit", str(limit)] if limit else []), check=False,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        json_files = [json_file]
    merged: dict[str, dict[str, Any]] = {}
    for json_file in json_files:
        if json_file.suffix == ".jsonl" or not json_file.exists():
            partial = json_file if json_file.suffix == ".jsonl" else json_file.with_suffix(".partial.jsonl")
            if not partial.exists():
                continue
            rows = [json.loads(line) for line in partial.read_text().splitlines() if line.strip()]
            merged.update({r.pop("path"): r for r in rows})
        else:
            merged.update(json.loads(json_file.read_text())["results"])
    return _full_summary(merged) if merged else None


def _tree_files(results: dict[str, dict[str, Any]]) -> int | None:
    """How many config files the swept tree holds (``configs/datasets/**/*.py`` but ``__init__.py``)."""
    for path in results:
        head, sep, _ = path.partition("/configs/datasets/")
        if sep:
            root = Path(head + sep)
            return sum(1 for f in root.rglob("*.py") if f.name != "__init__.py") if root.is_dir() else None
    return None


def _full_summary(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    helpers = {p for p, r in results.items() if r["rc"] != 0 and NO_DATASETS in r.get("first_line", "")}
    counted = {p: r for p, r in results.items() if p not in helpers}
    ok = sum(r["rc"] == 0 for r in counted.values())
    broken = {p: why for p, r in counted.items() if r["rc"] != 0
              for why in [broken_in_reference("opencompass", r.get("first_line", ""), Path(p))] if why}
    total = _tree_files(results)
    # agreement with OpenCompass's own loadability: exit 0 where it loads the config, one typed refusal (no
    # traceback, no internal error) where it does not
    typed = {p for p in broken if not counted[p].get("traceback") and not counted[p].get("internal_error")}
    loads = len(counted) - len(broken)
    return {"files": len(results), "tree_files": total, "dataset_configs": len(counted), "ok": ok,
            "share": ok / len(counted) if counted else 0.0,
            "sample": total is None or len(results) < total,
            "reference_loads": loads, "ok_where_reference_loads": ok,
            "agree": ok + len(typed), "agreement": (ok + len(typed)) / len(counted) if counted else 0.0,
            "tracebacks": sum(bool(r.get("traceback")) for r in results.values()),
            "internal_errors": sum(bool(r.get("internal_error")) for r in results.values()),
            "network_attempts": sum(bool(r.get("network")) for r in results.values()),
            "broken_in_reference": broken,
            "failed": {p: r.get("first_line", "") for p, r in counted.items() if r["rc"] != 0}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write every figure and failure here")
    ap.add_argument("--limit", type=int, help="only the first N files of each tree")
    ap.add_argument("--top", type=int, default=8, help="failure kinds shown per column")
    ap.add_argument("--tree", choices=sorted(TREES), action="append", help="only this tree (repeatable)")
    ap.add_argument("--full-env-json", type=Path, nargs="+", help="read the full-environment sweep from these "
                    "files (oc_full_sweep.py's --json outputs, or their .partial.jsonl; merged, later ones win) "
                    "instead of running it")
    ap.add_argument("--full-env-limit", type=int, help="full-environment sweep over a uniform sample of N configs")
    ap.add_argument("--no-full-env", action="store_true", help="skip the full-environment sweep")
    args = ap.parse_args()
    trees = {k: v for k, v in TREES.items() if not args.tree or k in args.tree}
    from promptweave.compat.reference_index import index_for

    results: dict[str, Any] = {"index_sizes": {}}
    for pkg in trees:
        index = index_for(pkg)
        if index is not None:
            results["index_sizes"][pkg] = {f: len(n) for f, n in index.names.items()}
    start = time.perf_counter()
    for pkg, (name, sub) in trees.items():
        installed = sweep_tree(name, sub, args.limit)
        alone = sweep_alone(name, sub, args.limit)
        results[pkg] = {"promptweave_alone": alone, "with_reference": installed}
    results["seconds"] = round(time.perf_counter() - start, 1)
    full = None if args.no_full_env or "opencompass" not in trees else \
        full_env_results(args.full_env_json, args.full_env_limit)
    results["opencompass_full_environment"] = full
    print("| tree | dataset configs | resolve with the reference installed (--no-deps) | resolve with promptweave "
          "alone | broken in the reference too | resolve in the full OpenCompass environment, each config alone |")
    print("|---|---:|---:|---:|---:|---:|")
    for pkg in trees:
        a, w = results[pkg]["promptweave_alone"], results[pkg]["with_reference"]
        if not a.get("installed"):
            print(f"| {pkg} | not installed | | | |")
            continue
        cell = "no full environment"
        if pkg == "opencompass" and full:
            cell = (f"{full['ok']} of {full['dataset_configs']} exit 0 ({100 * full['share']:.1f}%)"
                    f"{' (sample of ' + str(full['files']) + ' files)' if full['sample'] else ''}; agrees with "
                    f"OpenCompass's own loadability on {full['agree']} ({100 * full['agreement']:.1f}%): exit 0 on "
                    f"{full['ok_where_reference_loads']} of the {full['reference_loads']} it loads, a typed refusal "
                    f"on {full['agree'] - full['ok']} of the {len(full['broken_in_reference'])} it cannot; "
                    f"{full['tracebacks'] + full['internal_errors']} tracebacks, {full['network_attempts']} "
                    "network attempts")
        elif pkg != "opencompass":
            cell = "-"
        print(f"| {pkg} | {a['dataset_configs']} | {w['ok']} ({100 * w['share']:.1f}%) | "
              f"{a['ok']} ({100 * a['share']:.1f}%) | {len(w['broken_in_reference'])} | {cell} |")
    for pkg in trees:
        for col in ("with_reference", "promptweave_alone"):
            r = results[pkg][col]
            if not r.get("installed"):
                continue
            print(f"\n{pkg}, {col.replace('_', ' ')}: top failure kinds")
            for kind, n in r["kinds"][:args.top]:
                print(f"  {n:5d}  {kind}")
            if r["broken_in_reference"]:
                why = Counter("a name defined nowhere in the reference" if "defined nowhere" in v
                              else "an import of a name its module lacks" if "ImportError" in v
                              else v.split(":")[0] for v in r["broken_in_reference"].values())
                print(f"  broken in the reference too (still counted): {len(r['broken_in_reference'])} ("
                      + ", ".join(f"{k}: {n}" for k, n in why.most_common()) + ")")
    print(f"\n({results['seconds']}s; files defining no datasets, not counted: "
          + ", ".join(f"{p} {results[p]['promptweave_alone'].get('not_dataset_configs', 0)}" for p in trees) + ")")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False, default=list))


if __name__ == "__main__":
    sys.exit(main())
