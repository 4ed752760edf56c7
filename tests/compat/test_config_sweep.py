"""``benchmarks/config_sweep.py``: which failures it marks as broken in the reference itself."""
from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def sweep():
    spec = importlib.util.spec_from_file_location(
        "config_sweep", Path(__file__).resolve().parents[2] / "benchmarks" / "config_sweep.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_broken_in_the_reference(sweep, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "pwsweep_ref"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "post.py").write_text(textwrap.dedent("""
        import nothing_here_either

        def kept_postprocess(text):
            return text

        alias_postprocess = kept_postprocess
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    sweep.defined_names.cache_clear()
    unknown = "[PW600] c.py: datasets[0].eval_cfg.pred_postprocessor.type: unknown postprocessor (got '{}'); expected x"
    assert sweep.broken_in_reference("pwsweep_ref", unknown.format("gone_postprocess"))
    assert sweep.broken_in_reference("pwsweep_ref", unknown.format("kept_postprocess")) is None
    assert sweep.broken_in_reference("pwsweep_ref", unknown.format("alias_postprocess")) is None
    assert sweep.broken_in_reference("pwsweep_ref", "[PW140] c.py: config import 'x' names no file (looked for y)")
    assert sweep.broken_in_reference("pwsweep_ref", "[PW100] c.py: datasets[0].reader_cfg: reader_cfg must be a "
                                                    "dict (got [{'input_columns': ['q']}])")
    assert sweep.broken_in_reference("pwsweep_ref", "[PW110] c.py: datasets[0].infer_cfg.prompt_template.template: "
                                                    "missing 'template'")
    assert sweep.broken_in_reference("pwsweep_ref", "[PW600] c.py: datasets[0].eval_cfg.evaluator.type: unknown "
                                                    "evaluator (got 'kept_postprocess')") is None
    sweep.defined_names.cache_clear()
