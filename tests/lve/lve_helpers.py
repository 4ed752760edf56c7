"""Helpers shared by the LVE tests."""
from __future__ import annotations

from typing import Any


def base_test(**overrides: Any) -> dict[str, Any]:
    test: dict[str, Any] = {
        "description": "d",
        "model": "openai/gpt-3.5-turbo",
        "checker_args": {"checker_name": "RegexChecker", "pattern": "x", "match_safe": False},
    }
    test.update(overrides)
    return {k: v for k, v in test.items() if v is not None}
