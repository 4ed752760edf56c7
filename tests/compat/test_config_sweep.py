"""``benchmarks/config_sweep.py``: which failures it marks as broken in the reference itself."""
from __future__ import annotations

import importlib.util
import json
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



def test_full_environment_runs_merge_and_agreement_counts_typed_refusals(sweep, tmp_path: Path) -> None:
    """An earlier sample and a later run over the rest (and the sample's failures again) are one result over the
    whole tree; agreement is exit 0 where the reference loads a config, a typed refusal where it cannot."""
    tree = tmp_path / "opencompass" / "configs" / "datasets"
    names = ["a.py", "b.py", "c.py", "d.py", "sets.py"]
    for n in names:
        (tree / n.replace(".py", "")).mkdir(parents=True)
        (tree / n.replace(".py", "") / n).write_text("")
    (tree / "a" / "__init__.py").write_text("")  # not a config
    path = {n: str(tree / n.replace(".py", "") / n) for n in names}
    row = {"network": [], "traceback": False, "internal_error": False, "first_line": ""}
    broken = "error: [PW140] d.py: config import 'x' names no file (looked for y)"
    first = tmp_path / "sample.partial.jsonl"
    first.write_text("\n".join(json.dumps({"path": path[n], **row, **extra}) for n, extra in (
        ("a.py", {"rc": 0}), ("b.py", {"rc": 2, "first_line": "error: [PW640] b.py: task t: needs 'x'"}))))
    later = tmp_path / "rest.json"
    later.write_text(json.dumps({"summary": {}, "results": {
        path["b.py"]: {**row, "rc": 0}, path["c.py"]: {**row, "rc": 0},
        path["d.py"]: {**row, "rc": 2, "first_line": broken},
        path["sets.py"]: {**row, "rc": 2, "first_line": "error: sets.py defines no datasets"}}}))
    got = sweep.full_env_results([first, later], None)
    assert got["files"] == got["tree_files"] == 5 and not got["sample"]
    assert (got["dataset_configs"], got["ok"], got["reference_loads"]) == (4, 3, 3)
    assert got["agree"] == 4 and got["agreement"] == 1.0 and list(got["broken_in_reference"]) == [path["d.py"]]
    assert sweep.full_env_results([first], None)["sample"]  # 2 of the tree's 5 files
    assert sweep.full_env_results([first], None)["ok"] == 1
