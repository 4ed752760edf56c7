from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest


@pytest.fixture
def make_lve(tmp_path: Path) -> Callable[..., Path]:
    """Write an LVE folder: ``test`` as test.json plus ``files`` ({relative path: text}, bytes kept)."""
    counter = {"n": 0}

    def make(test: dict[str, Any] | None = None, files: dict[str, str] | None = None, raw: str | None = None) -> Path:
        counter["n"] += 1
        folder = tmp_path / f"lve{counter['n']}"
        folder.mkdir()
        text = raw if raw is not None else json.dumps(test)
        (folder / "test.json").write_text(text, encoding="utf-8")
        for rel, content in (files or {}).items():
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8"))
        return folder

    return make
