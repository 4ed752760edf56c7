"""Every LMEvaluator dataset config shipped in opencompass 0.5.4 lints clean with ``--no-data`` (skipped without
the reference's config tree). Their dataset loaders and dict postprocessors are the reference's own long tail,
served by the registry bridge when opencompass is installed; as the config sweep does, that installed reference is
answered from a static reading of its source (``benchmarks/config_sweep.py``), nothing of it is imported."""
from __future__ import annotations

import importlib.util
import re
import sys
import warnings
from pathlib import Path

import pytest

from promptweave.run.lint import lint_file

ROOT = Path(__file__).resolve().parents[2]


def _reference_root() -> Path | None:
    spec = importlib.util.find_spec("opencompass")
    return Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None


@pytest.fixture(scope="module")
def sweep():
    if _reference_root() is None:
        pytest.skip("needs the opencompass config tree: pip install --no-deps opencompass==0.5.4 (.ci/run does)")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import config_sweep
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return config_sweep


def _lm_configs(root: Path) -> list[Path]:
    pattern = re.compile(r"type\s*=\s*LMEvaluator\b")
    return sorted(p for p in (root / "configs" / "datasets").rglob("*.py") if pattern.search(p.read_text("utf-8")))


def test_shipped_lmevaluator_configs_lint_clean(sweep) -> None:
    root = _reference_root()
    files = _lm_configs(root)
    assert len(files) >= 50  # the wheel ships 60
    failed = {}
    # bridge: the installed reference is answered from its static index by the product itself, nothing patched
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in files:
            rep = lint_file(f, no_data=True)
            if not rep.ok:
                failed[str(f.relative_to(root))] = rep.problems[0]
    # the multi-turn ones ask ChatInferencer for a reply at every turn (infer_mode='every'), an inferencer form
    # promptweave does not run yet: that, and only that, may fail; their evaluators must resolve
    for name, problem in failed.items():
        assert "[PW160]" in problem and "infer_mode='every'" in problem, f"{name}: {problem}"
        assert "eval_cfg" not in problem
    assert len(failed) <= 5, failed
