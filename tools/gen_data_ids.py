"""Regenerate ``src/promptweave/compat/data_ids.py`` from the installed OpenCompass's dataset mapping.

Usage: python tools/gen_data_ids.py [--check]

The table (dataset id -> local folder or file, relative to the data cache) is read from
``opencompass/utils/datasets_info.py`` as data (``ast.literal_eval`` of ``DATASETS_MAPPING``; nothing is
imported or run), so only the facts travel: ids and their local paths.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "promptweave" / "compat" / "data_ids.py"

HEADER = '''"""OpenCompass dataset ids -> their local paths under the data cache (generated; do not edit by hand).

Regenerate with ``python tools/gen_data_ids.py`` against an installed ``opencompass``. ``data.locate`` joins a
local path onto ``$COMPASS_DATA_CACHE`` (else the working directory), then ``~/.cache/opencompass``.
"""
from __future__ import annotations

SOURCE = {source!r}

DATA_IDS: dict[str, str] = {{
'''


def read_mapping() -> tuple[dict[str, str], str]:
    spec = importlib.util.find_spec("opencompass")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("opencompass is not installed")
    info = Path(next(iter(spec.submodule_search_locations))) / "utils" / "datasets_info.py"
    tree = ast.parse(info.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DATASETS_MAPPING"
                                                for t in node.targets):
            mapping = ast.literal_eval(node.value)
            break
    else:
        raise SystemExit(f"no DATASETS_MAPPING in {info}")
    out = {k: v["local"] for k, v in mapping.items() if isinstance(v, dict) and isinstance(v.get("local"), str)}
    version = "unknown"
    for dist in Path(info.parents[2]).glob("opencompass-*.dist-info"):
        version = dist.name[len("opencompass-"):-len(".dist-info")]
    return out, f"opencompass {version} utils/datasets_info.py"


def render(mapping: dict[str, str], source: str) -> str:
    lines = [HEADER.format(source=source)]
    for key in sorted(mapping):
        lines.append(f"    {key!r}: {mapping[key]!r},\n")
    lines.append("}\n")
    return "".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed table is out of date")
    args = ap.parse_args()
    text = render(*read_mapping())
    if args.check:
        sys.exit(0 if OUT.read_text(encoding="utf-8") == text else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({text.count(chr(10)) - 10} ids)")


if __name__ == "__main__":
    main()
