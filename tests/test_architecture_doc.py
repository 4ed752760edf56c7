"""docs/architecture.md is the code's map: its floor table names every package once, no import points up it, and
its 'what each package owns' table names every package."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _layers():
    spec = importlib.util.spec_from_file_location("layers", ROOT / "tools" / "layers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _floor_table() -> dict[str, int]:
    block = DOC.split("<!-- layers:begin -->", 1)[1].split("<!-- layers:end -->", 1)[0]
    floors: dict[str, int] = {}
    for m in re.finditer(r"^\| (\d+) \| (.+) \|$", block, re.M):
        for name in re.findall(r"`([^`]+)`", m.group(2)):
            assert name not in floors, f"{name} is on two floors"
            floors[name] = int(m.group(1))
    return floors


def test_the_floor_table_names_every_package() -> None:
    assert set(_floor_table()) == set(_layers().package_graph())


def test_no_import_points_up_the_floor_table() -> None:
    floors = _floor_table()
    up = [f"{a} (floor {floors[a]}) imports {b} (floor {floors[b]})"
          for a, targets in _layers().package_graph().items() for b in targets if floors[b] > floors[a]]
    assert up == [], "regenerate the table: python tools/layers.py --markdown"


def test_the_layers_tool_gives_each_package_one_floor_above_what_it_imports() -> None:
    layers = _layers()
    graph = {"a": set(), "b": {"a"}, "c": {"a", "b"}, "d": {"e"}, "e": {"d", "a"}}
    assert layers.floors(graph) == {"a": 0, "b": 1, "c": 2, "d": 1, "e": 1}
    assert layers.rows(graph) == [(0, ["a"]), (1, ["b", "d", "e"]), (2, ["c"])]


def test_every_package_says_what_it_owns() -> None:
    owns = DOC.split("## What each package owns", 1)[1].split("\n## ", 1)[0]
    named = {re.sub(r"(/|\.py)$", "", n) for n in re.findall(r"^\| `([^`]+)` \|", owns, re.M)}
    assert named == set(_layers().package_graph())
