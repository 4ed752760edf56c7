from pathlib import Path

import numpy as np

from promptweave.shots import cache


def test_cache_dir_default_and_env_override(monkeypatch, tmp_path):
    monkeypatch.delenv(cache.ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "promptweave"
    monkeypatch.setenv(cache.ENV, str(tmp_path / "elsewhere"))
    assert cache.cache_dir() == tmp_path / "elsewhere"


def test_key_depends_on_every_text_and_setting():
    base = cache.key_of("bm25", {"k1": 1.5}, ["a b", "c"])
    assert base == cache.key_of("bm25", {"k1": 1.5}, ["a b", "c"])
    assert base != cache.key_of("bm25", {"k1": 1.2}, ["a b", "c"])
    assert base != cache.key_of("bm25", {"k1": 1.5}, ["a", "b c"])  # boundaries count, not just the bytes
    assert base != cache.key_of("embed", {"k1": 1.5}, ["a b", "c"])


def test_round_trip_and_a_corrupt_entry_is_a_miss(tmp_path):
    arrays = {"x": np.arange(5), "w": np.linspace(0, 1, 3)}
    path = cache.save_arrays("demo", "k1", arrays)
    assert path is not None and Path(path).parent == tmp_path / "pwcache" / "demo"
    got = cache.load_arrays("demo", "k1")
    assert got is not None and all(np.array_equal(got[k], v) for k, v in arrays.items())
    Path(path).write_bytes(b"not an npz")
    assert cache.load_arrays("demo", "k1") is None
    assert cache.load_arrays("demo", "missing") is None
