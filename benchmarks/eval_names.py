"""Count evaluator and postprocessor names over the reference config trees (which to implement natively first).

Usage: python benchmarks/eval_names.py [--top N] [--json out.json]
Reads every ``*.py`` under the installed opencompass and ais_bench dataset config trees with ``ast`` (nothing is
executed) and counts, per name, the number of config files whose ``evaluator=dict(type=X)`` /
``pred_postprocessor=dict(type=X)`` / ``dataset_postprocessor=dict(type=X)`` mention it.
"""
from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import json
from pathlib import Path


def _trees() -> list[tuple[str, Path]]:
    out = []
    for pkg, sub in (("opencompass", "configs/datasets"), ("ais_bench", "benchmark/configs/datasets")):
        spec = importlib.util.find_spec(pkg)
        if spec and spec.submodule_search_locations:
            root = Path(next(iter(spec.submodule_search_locations))) / sub
            if root.is_dir():
                out.append((pkg, root))
    return out


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rsplit(".", 1)[-1]
    return None


def _type_of(value: ast.AST) -> str | None:
    if isinstance(value, ast.Call):
        for kw in value.keywords:
            if kw.arg == "type":
                return _name(kw.value)
    if isinstance(value, ast.Dict):
        for k, v in zip(value.keys, value.values):
            if isinstance(k, ast.Constant) and k.value == "type":
                return _name(v)
    return None


KEYS = {"evaluator": "evaluator", "pred_postprocessor": "postprocessor", "dataset_postprocessor": "postprocessor",
        "llm_evaluator": "evaluator", "rule_evaluator": "evaluator", "base_evaluator": "evaluator",
        "dict_postprocessor": "postprocessor", "postprocessor": "postprocessor"}


def count(trees: list[tuple[str, Path]], per_file: list | None = None) -> dict[str, collections.Counter]:
    """Name -> number of config files using it; ``per_file`` (if given) receives (file, names used) pairs."""
    counts = {"evaluator": collections.Counter(), "postprocessor": collections.Counter()}
    for _pkg, root in trees:
        for path in sorted(root.rglob("*.py")):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
            except SyntaxError:
                continue
            seen: dict[str, set[str]] = {"evaluator": set(), "postprocessor": set()}
            for node in ast.walk(tree):
                pairs = []
                if isinstance(node, ast.Call):
                    pairs = [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
                elif isinstance(node, ast.Dict):
                    pairs = [(k.value, v) for k, v in zip(node.keys, node.values)
                             if isinstance(k, ast.Constant) and isinstance(k.value, str)]
                for key, value in pairs:
                    fam = KEYS.get(key)
                    if fam:
                        t = _type_of(value)
                        if t:
                            seen[fam].add(t)
            for fam, names in seen.items():
                counts[fam].update(names)
            if per_file is not None and (seen["evaluator"] or seen["postprocessor"]):
                per_file.append((path, seen))
    return counts


def _native() -> dict[str, set[str]]:
    from promptweave.compat.evaluators import EVALUATORS
    from promptweave.compat.postprocessors import POSTPROCESSORS
    from promptweave.evaluate.judge import _DICT_POSTPROCESSORS

    return {"evaluator": set(EVALUATORS), "postprocessor": set(POSTPROCESSORS) | set(_DICT_POSTPROCESSORS)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--json")
    args = ap.parse_args()
    per_file: list = []
    counts = count(_trees(), per_file)
    native = _native()
    for fam, c in counts.items():
        print(f"== {fam}: {len(c)} names, {sum(c.values())} uses")
        for i, (name, n) in enumerate(c.most_common(args.top), 1):
            print(f"{i:3d} {n:5d} {name}{'' if name in native[fam] else '   (not native)'}")
        top = [name for name, _ in c.most_common(args.top)]
        print(f"   native: {sum(n in native[fam] for n in top)} of the top {len(top)}")
    ok = sum(all(n in native[f] for f, names in seen.items() for n in names) for _p, seen in per_file)
    print(f"== config files whose every evaluator/postprocessor name is native: {ok} of {len(per_file)} "
          f"({100 * ok / max(len(per_file), 1):.1f}%)")
    if args.json:
        Path(args.json).write_text(json.dumps({f: dict(c.most_common()) for f, c in counts.items()}, indent=1))


if __name__ == "__main__":
    main()
