"""Regenerate ``src/promptweave/compat/data_urls.py``: the archives the references download, with their md5s.

Usage: python tools/gen_data_urls.py [--check]

Two sources, both read as data (nothing is imported or run):
- OpenCompass's ``utils/datasets_info.py``: ``DATASETS_URL`` (a key matched against a dataset's local path ->
  archive URL and md5), read with ``ast.literal_eval``;
- AISBench's dataset config folders: the archive each folder's README tells users to download, keyed by the
  ``ais_bench/datasets/<folder>`` paths its configs name (the md5 is OpenCompass's where the URL is the same).
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "promptweave" / "compat" / "data_urls.py"

HEADER = '''"""The archives the references download for a dataset, with their md5s (generated; do not edit by hand).

Regenerate with ``python tools/gen_data_urls.py`` against installed ``opencompass`` and ``ais_bench_benchmark``.
``ARCHIVES`` is OpenCompass's table: a key found inside a dataset's local path names the archive (the last key
that matches wins, as OpenCompass picks it). ``AISBENCH_ARCHIVES`` maps an AISBench data folder to the archive its
documentation names. ``data.fetch`` reads both; ``run`` never downloads.
"""
from __future__ import annotations

SOURCE = {source!r}

ARCHIVES: dict[str, tuple[str, str]] = {{
'''

_URL = re.compile(r"https?://[^\s)\]\"'<>]+?\.(?:zip|tar\.gz|tgz|tar)")
_PATH = re.compile(r"""path\s*=\s*['"](ais_bench/datasets/[^'"/]+)""")


def _package(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _version(site: Path, dist: str) -> str:
    for d in site.glob(f"{dist}-*.dist-info"):
        return d.name[len(dist) + 1:-len(".dist-info")]
    return "unknown"


def read_tables() -> tuple[dict[str, tuple[str, str]], dict[str, str], str]:
    oc = _package("opencompass")
    info = oc / "utils" / "datasets_info.py"
    tree = ast.parse(info.read_text(encoding="utf-8"))
    table = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DATASETS_URL"
                                                for t in node.targets):
            table = ast.literal_eval(node.value)
    if table is None:
        raise SystemExit(f"no DATASETS_URL in {info}")
    archives = {k: (v["url"], v["md5"]) for k, v in table.items()
                if isinstance(v, dict) and isinstance(v.get("url"), str) and isinstance(v.get("md5"), str)}
    ais = _package("ais_bench") / "benchmark" / "configs" / "datasets"
    ais_map: dict[str, str] = {}
    for folder in sorted(p for p in ais.iterdir() if p.is_dir()):
        urls: list[str] = []
        for readme in sorted(folder.glob("README*.md")):
            for url in _URL.findall(readme.read_text(encoding="utf-8", errors="replace")):
                if url not in urls:
                    urls.append(url)
        if len(urls) != 1:  # none, or several archives: the folder's configs say no single one
            continue
        for cfg in sorted(folder.glob("*.py")):
            for path in _PATH.findall(cfg.read_text(encoding="utf-8", errors="replace")):
                ais_map.setdefault(path, urls[0])
    source = (f"opencompass {_version(oc.parent, 'opencompass')} utils/datasets_info.py; "
              f"ais_bench_benchmark {_version(ais.parents[3], 'ais_bench_benchmark')} configs/datasets/*/README*.md")
    return archives, ais_map, source


def render(archives: dict[str, tuple[str, str]], ais_map: dict[str, str], source: str) -> str:
    out = [HEADER.format(source=source)]
    out += [f"    {k!r}: ({u!r}, {m!r}),\n" for k, (u, m) in archives.items()]
    out.append("}\n\nAISBENCH_ARCHIVES: dict[str, str] = {\n")
    out += [f"    {k!r}: {u!r},\n" for k, u in sorted(ais_map.items())]
    out.append("}\n")
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed table differs")
    args = ap.parse_args()
    text = render(*read_tables())
    if args.check:
        sys.exit(0 if OUT.read_text(encoding="utf-8") == text else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
