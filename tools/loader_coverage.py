"""How many of a reference's dataset config files read all their data with promptweave's native loaders.

Usage: python tools/loader_coverage.py [--package opencompass|ais_bench]

Each config file is loaded the safe way, its ``*_datasets`` lists collected and every dataset's ``type=``
checked with ``promptweave.data.check_loader`` (no data is read).
"""
from __future__ import annotations

import argparse
import collections
from pathlib import Path

from count_loaders import TREES, site_root

from promptweave.config.loader import normalise
from promptweave.config.safe_py import load_py_config
from promptweave.data import check_loader
from promptweave.errors import PromptweaveError


def coverage(package: str) -> collections.Counter:
    root = site_root(package) / TREES[package][1] / "datasets"
    out: collections.Counter = collections.Counter()
    for f in sorted(root.rglob("*.py")):
        try:
            variables = load_py_config(Path(f))
            if isinstance(variables, tuple):  # (variables, env vars read)
                variables = variables[0]
        except Exception:  # noqa: BLE001 - any refusal counts as "does not load"; the config sweep reports why
            out["config does not load in safe mode"] += 1
            continue
        datasets = [normalise(d) for k, v in variables.items() if k.endswith("_datasets") and isinstance(v, list)
                    for d in v if isinstance(d, dict)]
        if not datasets:
            out["no datasets"] += 1
            continue
        try:
            kinds = {c.kind if c else "plain" for c in (check_loader(d, file=str(f)) for d in datasets)}
        except PromptweaveError:
            out["a loader needs the reference installed"] += 1
            continue
        out["all native" if kinds <= {"native", "plain"} else "bridge"] += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", default="opencompass", choices=sorted(TREES))
    args = ap.parse_args()
    got = coverage(args.package)
    total = sum(got.values())
    print(f"{args.package}: {total} dataset config files")
    for kind, n in got.most_common():
        print(f"  {n:5d}  {kind}")


if __name__ == "__main__":
    main()
