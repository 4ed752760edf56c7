import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "conformance"


@pytest.fixture
def shared_corpus() -> Path:
    if not SHARED.exists():
        pytest.skip("../shared/conformance is not beside this checkout")
    return SHARED


@pytest.fixture(autouse=True)
def _warnings_visible():
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        yield
