"""Count which dataset loader classes the reference config trees use, by number of config files.

Usage: python tools/count_loaders.py [--package opencompass|ais_bench] [--top N]

A loader class is a class registered with ``@LOAD_DATASET.register_module()`` in the reference's
``datasets`` package (found by reading its source, never importing it). A config file uses it when
the class name appears as a ``type=`` value (keyword or ``'type':`` dict entry) in the file.
"""
from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
from pathlib import Path

TREES = {"opencompass": ("opencompass/datasets", "opencompass/configs"),
         "ais_bench": ("ais_bench/benchmark/datasets", "ais_bench/benchmark/configs")}


def site_root(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{package} is not installed")
    return Path(next(iter(spec.submodule_search_locations))).parent


def _registered(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for dec in node.decorator_list:
                if "LOAD_DATASET" in ast.unparse(dec):
                    out.add(node.name)
    return out


def loader_classes(root: Path, rel: str) -> set[str]:
    names: set[str] = set()
    for f in (root / rel).rglob("*.py"):
        try:
            names |= _registered(ast.parse(f.read_text(encoding="utf-8", errors="replace")))
        except SyntaxError:
            continue
    return names


def type_names(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "type":
            val = node.value
        elif isinstance(node, ast.Dict):
            val = next((v for k, v in zip(node.keys, node.values)
                        if isinstance(k, ast.Constant) and k.value == "type"), None)
        else:
            continue
        if isinstance(val, ast.Name):
            out.add(val.id)
        elif isinstance(val, ast.Attribute):
            out.add(val.attr)
        elif isinstance(val, ast.Constant) and isinstance(val.value, str):
            out.add(val.value.rsplit(".", 1)[-1])
    return out


def count(package: str) -> tuple[collections.Counter, int]:
    root = site_root(package)
    src, cfg = TREES[package]
    loaders = loader_classes(root, src)
    counts: collections.Counter = collections.Counter()
    files = 0
    for f in sorted((root / cfg).rglob("*.py")):
        try:
            tree = ast.parse(f.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        used = type_names(tree) & loaders
        if used:
            files += 1
        counts.update(used)
    return counts, files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", default="opencompass", choices=sorted(TREES))
    ap.add_argument("--top", type=int, default=60)
    args = ap.parse_args()
    counts, files = count(args.package)
    print(f"{args.package}: {len(counts)} loader classes used by {files} config files")
    for rank, (name, n) in enumerate(counts.most_common(args.top), 1):
        print(f"{rank:3d} {n:5d} {name}")


if __name__ == "__main__":
    main()
