import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))


@pytest.fixture(autouse=True)
def _reference_config_tree(request):
    """These tests import the configs shipped in the reference wheels: skip, saying how, where they are absent."""
    import importlib.util

    package = "ais_bench" if "aisbench" in request.node.module.__name__ else "opencompass"
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"needs the {package} config tree: pip install --no-deps "
                    + ("ais_bench_benchmark" if package == "ais_bench" else "opencompass==0.5.4")
                    + " (.ci/run does)")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty ``COMPASS_DATA_CACHE`` for the test's stand-in data, run from the test's folder."""
    root = tmp_path / "cache"
    root.mkdir()
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(root))
    monkeypatch.chdir(tmp_path)
    return root
