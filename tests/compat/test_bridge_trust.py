"""What the bridge trusts: the index cache is data, checked against the installed reference before each use; the
reference is imported from the interpreter's install directories only, never from the working directory."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from promptweave.compat import bridge, reference_index, reference_tables
from tests.compat.fake_reference import point_bridge_at

PKG = "pwtrust_ref"
SRC = Path(__file__).resolve().parents[2] / "src"
FILES = {
    "__init__.py": "",
    "registry.py": """
        class Registry:
            def __init__(self):
                self.items = {}

            def register_module(self, name=None):
                def deco(obj):
                    self.items[name or obj.__name__] = obj
                    return obj
                return deco

            def get(self, name):
                return self.items.get(name)

        LOAD_DATASET = Registry()
        ICL_EVALUATORS = Registry()
        TEXT_POSTPROCESSORS = Registry()
        DICT_POSTPROCESSORS = Registry()
    """,
    "datasets/__init__.py": "from .base import BaseDataset\n",
    "datasets/base.py": "class BaseDataset:\n    pass\n",
    # registered in a module the package's __init__ never imports (as NeedleBench / RULER are in OpenCompass)
    "datasets/far/__init__.py": "",
    "datasets/far/far_post.py": """
        from ...registry import TEXT_POSTPROCESSORS


        @TEXT_POSTPROCESSORS.register_module('far-away')
        def far_postprocess(text):
            return text.upper()
    """,
    "evaluator/__init__.py": "from .base import BaseEvaluator\nfrom .noisy import NoisyEvaluator\n",
    # a constructor that reaches out (BigCodeBench / LiveCodeBench download, TruthfulQA prints)
    "evaluator/noisy.py": """
        from pathlib import Path

        from .base import BaseEvaluator


        class NoisyEvaluator(BaseEvaluator):
            def __init__(self, subset='full', k=1):
                print('downloading the benchmark ...')
                Path(__file__).with_name('CONSTRUCTED').write_text('built')
                self.subset = subset

            def score(self, predictions, references):
                return {'accuracy': 100.0 * sum(p == r for p, r in zip(predictions, references)) / len(predictions)}
    """,
    "evaluator/base.py": "class BaseEvaluator:\n    pass\n",
}


@pytest.fixture
def trust_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    site = tmp_path / "site-packages"
    for rel, text in FILES.items():
        path = site / PKG / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(reference_tables.HIDE_ENV, raising=False)
    importlib.invalidate_caches()
    point_bridge_at(monkeypatch, PKG)
    _reset()
    yield site
    _reset()
    for name in [m for m in sys.modules if m == PKG or m.startswith(PKG + ".")]:
        del sys.modules[name]


def _reset() -> None:
    bridge._module.cache_clear()
    bridge._registry.cache_clear()
    bridge._IMPORT_ERRORS.clear()
    reference_index.clear_memory()


def test_a_name_registered_in_a_module_nothing_imports_resolves_in_a_fresh_process(trust_reference) -> None:
    assert not [m for m in sys.modules if m.startswith(PKG + ".datasets.far")]
    found = bridge.reference_class("postprocessor", "far-away")
    assert found is not None and found[1].__name__ == "far_postprocess" and found[1]("ab") == "AB"


def _cache_file() -> Path:
    """The newest index cache file of the fake (an edited package gets a new fingerprint, so a new file)."""
    files = list(reference_index.cache_dir().glob(f"{PKG}-*.json"))
    assert files
    return max(files, key=lambda p: p.stat().st_mtime_ns)


@pytest.mark.parametrize("module", ["subprocess", f"{PKG}.datasets.base", "os.path", f"{PKG}.nowhere"])
def test_an_edited_cache_entry_is_never_trusted(trust_reference, module: str) -> None:
    reference_index.index_for(PKG)
    path = _cache_file()
    data = json.loads(path.read_text())
    index = data["index"]
    # the attack: a cache that makes subprocess.run (or another module's object) a postprocessor
    index["names"]["postprocessor"]["run"] = ["registered", "function"]
    index["origins"]["postprocessor"]["run"] = module
    index["origins"]["postprocessor"]["far-away"] = module
    index["hashes"][module] = "0" * 64
    path.write_text(json.dumps(data))
    reference_index.clear_memory()

    assert bridge.reference_class("postprocessor", "run") is None
    found = bridge.reference_class("postprocessor", "far-away")  # the honest entry is rebuilt from the source
    assert found is not None and found[1].__module__ == f"{PKG}.datasets.far.far_post"
    rebuilt = json.loads(_cache_file().read_text())["index"]
    assert "run" not in rebuilt["names"]["postprocessor"]
    assert rebuilt["origins"]["postprocessor"]["far-away"] == f"{PKG}.datasets.far.far_post"


def test_a_changed_reference_file_rebuilds_the_index(trust_reference) -> None:
    reference_index.index_for(PKG)
    target = trust_reference / PKG / "datasets" / "far" / "far_post.py"
    target.write_text(target.read_text().replace("'far-away'", "'moved-away'"))
    reference_index.clear_memory()
    bridge._module.cache_clear()
    assert bridge.reference_class("postprocessor", "far-away") is None
    assert json.loads(_cache_file().read_text())["index"]["names"]["postprocessor"].get("moved-away")


def test_a_package_outside_the_install_directories_is_no_reference(tmp_path: Path, monkeypatch) -> None:
    plain = tmp_path / "not-an-install-dir"
    (plain / PKG).mkdir(parents=True)
    (plain / PKG / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(plain))
    importlib.invalidate_caches()
    assert importlib.util.find_spec(PKG) is not None  # Python would import it ...
    assert reference_tables.package_root(PKG) is None  # ... the bridge does not take it for an installed reference


@pytest.mark.skipif(reference_tables.package_root("opencompass") is None, reason="needs opencompass installed "
                    "(pip install --no-deps opencompass==0.5.4, as .ci/run does)")
def test_an_opencompass_folder_in_the_working_directory_is_never_imported(tmp_path: Path) -> None:
    """``python -m promptweave`` puts the working directory first on sys.path; the bridge must not import the
    ``opencompass/`` folder found there (it would run as the user)."""
    fake = tmp_path / "opencompass"
    (fake / "registry").mkdir(parents=True)
    marker = tmp_path / "IMPORTED"
    for rel in ("__init__.py", "registry/__init__.py"):
        (fake / rel).write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    cfg = tmp_path / "ds.py"
    cfg.write_text(textwrap.dedent("""
        ds_datasets = [dict(
            abbr='x', type='LongBenchqasperDataset', path='THUDM/LongBench', name='qasper',
            reader_cfg=dict(input_columns=['input'], output_column='answers', test_split='test'),
            infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{input}'),
                           retriever=dict(type='ZeroRetriever'), inferencer=dict(type='GenInferencer')),
            eval_cfg=dict(evaluator=dict(type='LongBenchF1Evaluator'), pred_role='BOT'))]
    """))
    env = {**os.environ, "PYTHONPATH": str(SRC), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-m", "promptweave", "lint", "--no-data", str(cfg)], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=600)
    assert not marker.exists(), out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr


def test_planning_never_constructs_a_bridged_evaluator(trust_reference, tmp_path: Path, capsys) -> None:
    from promptweave.errors import EvaluationError
    from promptweave.evaluate import build_evaluation

    ev = build_evaluation({"evaluator": {"type": "NoisyEvaluator", "subset": "hard"}})
    assert not (trust_reference / PKG / "evaluator" / "CONSTRUCTED").exists()
    assert "downloading" not in capsys.readouterr().out
    with pytest.raises(EvaluationError, match="bad arguments") as err:  # arguments bound to the signature
        build_evaluation({"evaluator": {"type": "NoisyEvaluator", "subsett": "hard"}})
    assert "subsett" in str(err.value)
    assert not (trust_reference / PKG / "evaluator" / "CONSTRUCTED").exists()
    got = ev.evaluator.score(["a", "b"], ["a", "c"])  # scoring builds it, once
    assert got.metrics == {"accuracy": 50.0}
    assert (trust_reference / PKG / "evaluator" / "CONSTRUCTED").exists()
