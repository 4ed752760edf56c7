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
    pkg = tmp_path / "site-packages" / "pwsweep_ref"  # references are found in install directories only
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "post.py").write_text(textwrap.dedent("""
        import nothing_here_either

        def kept_postprocess(text):
            return text

        alias_postprocess = kept_postprocess
    """))
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
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


def test_a_base_name_the_base_file_never_defines_is_broken_in_the_reference(sweep, tmp_path: Path) -> None:
    (tmp_path / "base_a.py").write_text("A_mini_datasets = []\nfor i in range(2):\n    other = i\n")
    (tmp_path / "base_star.py").write_text("from .elsewhere import *\n")
    cfg = tmp_path / "top.py"
    cfg.write_text("from mmengine.config import read_base\n\nwith read_base():\n"
                   "    from .base_a import A_datasets\n    from .base_star import B_datasets\n"
                   "    from .base_a import other\n")

    def problem(line: int, target: str, name: str) -> str:
        return f"[PW140] {cfg}:{line}: {target} defines no {name!r}"

    why = sweep.broken_in_reference("opencompass", problem(4, "base_a.py", "A_datasets"))
    assert why and "'A_datasets'" in why and "base_a.py" in why
    # a star import could bind it: not known to be broken
    assert sweep.broken_in_reference("opencompass", problem(5, "base_star.py", "B_datasets")) is None
    # bound in the base file (our reading would be wrong, not the reference): not classified
    assert sweep.broken_in_reference("opencompass", problem(6, "base_a.py", "other")) is None
    # the line holds no such import
    assert sweep.broken_in_reference("opencompass", problem(2, "base_a.py", "A_datasets")) is None

