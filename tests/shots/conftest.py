import pytest


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    # Each test gets its own index cache and the hub is never contacted.
    monkeypatch.setenv("PROMPTWEAVE_CACHE", str(tmp_path / "pwcache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
