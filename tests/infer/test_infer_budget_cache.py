from __future__ import annotations

import sqlite3

import pytest

from promptweave.errors import ConfigError
from promptweave.infer import ResponseCache, fit_shots, request_key
from promptweave.models.base import GenerationParams


def test_fit_shots_drops_from_the_end() -> None:
    assert fit_shots([4, 9, 2], [10, 10, 10], 5, 100) == [4, 9, 2]
    assert fit_shots([4, 9, 2], [10, 10, 10], 5, 30) == [4, 9]
    assert fit_shots([4, 9, 2], [10, 30, 1], 5, 30) == [4]  # a later short example is not pulled forward
    assert fit_shots([4, 9, 2], [10, 10, 10], 50, 30) == []
    assert fit_shots([4, 9], [10, 10], 5, None) == [4, 9]


def test_fit_shots_uses_the_longest_label_and_reserve() -> None:
    assert fit_shots(["a", "b"], [10, 10], [3, 12, 5], 31) == ["a"]
    assert fit_shots(["a", "b"], [10, 10], [3, 12, 5], 32) == ["a", "b"]
    assert fit_shots(["a", "b"], [10, 10], 3, 32, reserve=10) == ["a"]


def test_fit_shots_checks_counts() -> None:
    with pytest.raises(ConfigError, match="token count"):
        fit_shots([1, 2], [3], 0, 10)


def test_cache_roundtrip_in_wal_mode(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    k = request_key({"name": "m"}, "generate", "hi", GenerationParams())
    with ResponseCache(path) as c:
        c.put(k, "m", "generate", "hi", "there")
        assert c.get(k) == "there" and len(c) == 1
    with ResponseCache(path) as c:  # survives reopening
        assert c.get_many([k, "nope"]) == {k: "there"}
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_key_depends_on_model_request_and_params() -> None:
    base = request_key({"name": "m", "url": "u"}, "chat", [{"role": "user", "content": "x"}], GenerationParams())
    assert base != request_key({"name": "m2", "url": "u"}, "chat", [{"role": "user", "content": "x"}],
                               GenerationParams())
    assert base != request_key({"name": "m", "url": "u"}, "chat", [{"role": "user", "content": "y"}],
                               GenerationParams())
    assert base != request_key({"name": "m", "url": "u"}, "chat", [{"role": "user", "content": "x"}],
                               GenerationParams(max_out_len=3))
    assert base == request_key({"url": "u", "name": "m"}, "chat", ({"content": "x", "role": "user"},),
                               GenerationParams())
