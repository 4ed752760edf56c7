"""The layers the imports really have: each package of ``src/promptweave`` (a folder, or a top-level module) on the
lowest floor above everything it imports.

Usage: python tools/layers.py [--markdown]

Every import counts, those inside functions too (they tie packages together just the same); the package facade
``promptweave/__init__.py`` and ``__main__.py`` are left out (they import the public names from everywhere). Packages
that import each other in a loop share one floor and are printed together. ``--markdown`` prints the table
``docs/architecture.md`` carries; ``tests/test_architecture_doc.py`` checks that table against the code.
"""
from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "promptweave"
FACADE = {"__init__", "__main__"}


def package_of(path: Path) -> str | None:
    """The package a source file belongs to (``data`` for data/loaders/qa.py, ``errors`` for errors.py)."""
    rel = path.relative_to(SRC).parts
    if len(rel) == 1:
        stem = rel[0][:-3]
        return None if stem in FACADE else stem
    return rel[0]


def imported_packages(path: Path) -> set[str]:
    """The packages of ``promptweave`` a file imports (relative imports resolved)."""
    here = path.relative_to(SRC).with_suffix("").parts
    base = list(here[:-1])
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                names = [".".join(["promptweave", *parts, *([node.module] if node.module else [])])]
            else:
                names = [node.module or ""]
            if names[0] == "promptweave":  # from promptweave import errors
                names = [f"promptweave.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "promptweave" and len(parts) > 1 and parts[1] not in FACADE and (
                    (SRC / parts[1]).is_dir() or (SRC / f"{parts[1]}.py").is_file()):  # not a facade attribute
                out.add(parts[1])
    return out


def package_graph() -> dict[str, set[str]]:
    """package -> the other packages it imports."""
    graph: dict[str, set[str]] = defaultdict(set)
    for path in sorted(SRC.rglob("*.py")):
        pkg = package_of(path)
        if pkg is None:
            continue
        graph[pkg] |= imported_packages(path) - {pkg}
    for targets in list(graph.values()):
        for t in targets:
            graph.setdefault(t, set())
    return dict(graph)


def _components(graph: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    """Each package's strongly connected group (itself alone unless it is in an import loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comp: dict[str, frozenset[str]] = {}

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            for w in group:
                comp[w] = frozenset(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comp


def floors(graph: dict[str, set[str]] | None = None) -> dict[str, int]:
    """package -> its floor: 0 when it imports no other package, else one above the highest it imports."""
    graph = package_graph() if graph is None else graph
    comp = _components(graph)
    memo: dict[frozenset[str], int] = {}

    def floor_of(group: frozenset[str]) -> int:
        if group not in memo:
            below = {comp[t] for v in group for t in graph[v]} - {group}
            memo[group] = 1 + max((floor_of(g) for g in below), default=-1)
        return memo[group]

    return {pkg: floor_of(comp[pkg]) for pkg in graph}


def rows(graph: dict[str, set[str]] | None = None) -> list[tuple[int, list[str]]]:
    """(floor, its packages, sorted) from the bottom up."""
    by_floor: dict[int, list[str]] = defaultdict(list)
    for pkg, f in floors(graph).items():
        by_floor[f].append(pkg)
    return [(f, sorted(by_floor[f])) for f in sorted(by_floor)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="print the table docs/architecture.md carries")
    args = ap.parse_args()
    graph = package_graph()
    if args.markdown:
        print("| floor | packages |")
        print("|---|---|")
        for f, pkgs in rows(graph):
            print(f"| {f} | {', '.join(f'`{p}`' for p in pkgs)} |")
        return 0
    for f, pkgs in rows(graph):
        for p in pkgs:
            print(f"{f:2} {p:12} imports {', '.join(sorted(graph[p])) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
