"""The reference bridge's rule, on a fake reference package written to a tmp dir and put on ``sys.path``.

The fake stands in for an installed ``opencompass`` (which cannot be imported here: its dependencies are absent);
the bridge's module tables are pointed at it for the test.
"""
from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from promptweave.compat import bridge, reference_index
from tests.compat.fake_reference import point_bridge_at, set_tables

PKG = "pwfake_ref"
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
    "datasets/__init__.py": """
        from os.path import join  # a function from outside the package: never a postprocessor
        from .base import BaseDataset
        from .mine import *
        from .evals import GoodEvaluator as RenamedEvaluator
        from .twin_a import *
        from .twin_b import *
    """,
    # one name registered twice (as OpenCompass's FTSEvaluator): the registry keeps the last
    "datasets/twin_a.py": """
        from ..registry import ICL_EVALUATORS
        from ..evaluator.base import BaseEvaluator


        @ICL_EVALUATORS.register_module()
        class TwinEvaluator(BaseEvaluator):
            def __init__(self, tag):
                self.tag = tag
    """,
    "datasets/twin_b.py": """
        from ..registry import ICL_EVALUATORS
        from ..evaluator.base import BaseEvaluator


        @ICL_EVALUATORS.register_module()
        class TwinEvaluator(BaseEvaluator):
            pass
    """,
    "unimported_twin.py": """
        from .evaluator.base import BaseEvaluator


        class TwinEvaluator(BaseEvaluator):  # the reference never imports this module
            pass
    """,
    "datasets/base.py": """
        class BaseDataset:
            pass
    """,
    "datasets/mine.py": """
        from ..registry import LOAD_DATASET, DICT_POSTPROCESSORS
        from .base import BaseDataset
        from . import base


        class GoodDataset(BaseDataset):
            pass


        class GrandchildDataset(GoodDataset):
            pass


        class DottedBaseDataset(base.BaseDataset):
            pass


        class NotADataset:
            pass


        @LOAD_DATASET.register_module()
        class RegisteredOnly:  # served by the registry rule, whatever its base
            pass


        def good_postprocess(text):
            return text.strip()


        @DICT_POSTPROCESSORS.register_module()
        def fake_judge_postprocess(output, output_path):
            right = sum(v["prediction"].strip() == "A" for v in output.values())
            return {"accuracy": 100 * right / len(output), "note": "not a number"}


        def _private_postprocess(text):
            return text


        lambda_postprocess = lambda text: text  # noqa: E731 - an assignment, not a def
    """,
    "datasets/evals.py": """
        from ..evaluator.base import BaseEvaluator


        class GoodEvaluator(BaseEvaluator):
            pass
    """,
    "evaluator/__init__.py": """
        from .base import BaseEvaluator
    """,
    "evaluator/base.py": """
        class BaseEvaluator:
            pass
    """,
    "other.py": """
        from .datasets.base import BaseDataset


        class HiddenDataset(BaseDataset):  # a subclass, but not exported by an allow-listed module
            pass
    """,
}


@pytest.fixture
def fake_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for rel, text in FILES.items():
        path = tmp_path / "site-packages" / PKG / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the index of the fake, not in the user's cache
    importlib.invalidate_caches()
    point_bridge_at(monkeypatch, PKG)
    bridge._module.cache_clear()
    bridge._registry.cache_clear()
    reference_index.clear_memory()
    yield tmp_path
    bridge._module.cache_clear()
    bridge._registry.cache_clear()
    reference_index.clear_memory()
    for name in [m for m in sys.modules if m == PKG or m.startswith(PKG + ".")]:
        del sys.modules[name]


def _served(family: str, name: str) -> str | None:
    found = bridge.reference_class(family, name)
    return None if found is None else f"{found[0]}:{found[1].__module__}.{found[1].__name__}"


def test_exported_subclasses_are_served(fake_reference) -> None:
    assert _served("loader", "GoodDataset") == f"{PKG}:{PKG}.datasets.mine.GoodDataset"
    assert _served("loader", "GrandchildDataset") == f"{PKG}:{PKG}.datasets.mine.GrandchildDataset"
    assert _served("loader", "DottedBaseDataset") == f"{PKG}:{PKG}.datasets.mine.DottedBaseDataset"
    assert _served("evaluator", "RenamedEvaluator") == f"{PKG}:{PKG}.datasets.evals.GoodEvaluator"
    assert _served("postprocessor", "good_postprocess") == f"{PKG}:{PKG}.datasets.mine.good_postprocess"
    assert _served("loader", "RegisteredOnly") == f"{PKG}:{PKG}.datasets.mine.RegisteredOnly"


def test_a_class_defined_below_an_allow_listed_package_is_served(fake_reference, tmp_path, monkeypatch) -> None:
    """Rule 3: ``from pkg.datasets.evals import GoodEvaluator`` in a config; the index names the module."""
    from promptweave.compat import reference_index

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    reference_index.clear_memory()
    assert _served("evaluator", "GoodEvaluator") == f"{PKG}:{PKG}.datasets.evals.GoodEvaluator"
    assert bridge.reference_class("loader", "HiddenDataset") is None  # pkg.other is below no allow-listed package
    reference_index.clear_memory()


def test_a_name_registered_twice_is_the_class_of_the_module_the_config_imports(fake_reference) -> None:
    """The registry keeps the last of two classes registered under one name; a config importing the other one's
    module gets that one, as the reference builds it. Only a module the reference imported itself is used."""
    assert _served("evaluator", "TwinEvaluator") == f"{PKG}:{PKG}.datasets.twin_b.TwinEvaluator"
    found = bridge.reference_class("evaluator", "TwinEvaluator", f"{PKG}.datasets.twin_a")
    assert found is not None and found[1].__module__ == f"{PKG}.datasets.twin_a"
    assert found[1](tag="x").tag == "x"
    for elsewhere in (f"{PKG}.unimported_twin", "os", f"{PKG}.datasets.no_such_module", ""):
        found = bridge.reference_class("evaluator", "TwinEvaluator", elsewhere)
        assert found is not None and found[1].__module__ == f"{PKG}.datasets.twin_b", elsewhere
    assert f"{PKG}.unimported_twin" not in sys.modules  # the config's module is never imported
    # through the evaluation a config builds: ``tag=`` is an argument of twin_a's class only
    from promptweave.errors import PromptweaveError
    from promptweave.evaluate import build_evaluation

    built = build_evaluation({"evaluator": {"type": f"{PKG}.datasets.twin_a.TwinEvaluator", "tag": "SELFIES"}})
    assert built.evaluator.cls.__module__ == f"{PKG}.datasets.twin_a"
    with pytest.raises(PromptweaveError, match="tag"):
        build_evaluation({"evaluator": {"type": f"{PKG}.datasets.twin_b.TwinEvaluator", "tag": "SELFIES"}})


@pytest.mark.parametrize(("family", "name"), [
    ("loader", "NotADataset"),            # exported, but not a BaseDataset
    ("loader", "BaseDataset"),            # the base itself is no loader
    ("loader", "HiddenDataset"),          # a subclass outside the allow-listed modules
    ("loader", f"{PKG}.other.HiddenDataset"),  # a dotted path is never imported
    ("loader", "GoodEvaluator"),          # the wrong family
    ("evaluator", "GoodDataset"),
    ("postprocessor", "join"),            # a function from outside the package
    ("postprocessor", "_private_postprocess"),
    ("postprocessor", "lambda_postprocess"),
    ("postprocessor", "GoodDataset"),     # a class is no postprocessor
    ("loader", "NoSuchDataset"),
])
def test_what_is_not_served(fake_reference, family: str, name: str) -> None:
    assert bridge.reference_class(family, name) is None


def test_no_reference_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    set_tables(monkeypatch, {"loader": (("pw_absent", "pw_absent.registry", "LOAD_DATASET"),)},
               {"loader": (("pw_absent", ("pw_absent.base", "BaseDataset"), ("pw_absent.datasets",)),)})
    assert bridge.reference_class("loader", "GoodDataset") is None


def test_static_index_matches_the_rule(fake_reference, tmp_path, monkeypatch) -> None:
    """``compat.reference_index`` reads the same rule from the source; on the fake it agrees with the import."""
    from promptweave.compat import reference_index

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    reference_index.clear_memory()
    index = reference_index.index_for(PKG)
    assert index is not None
    importlib.import_module(f"{PKG}.datasets")  # its decorators fill the fake registry, as importing a reference does
    for family, names in index.names.items():
        for name in names:
            assert bridge.reference_class(family, name) is not None, (family, name)
    served = {f: {n for n, (rule, _k) in names.items() if rule == "exported"} for f, names in index.names.items()}
    assert served["loader"] == {"GoodDataset", "GrandchildDataset", "DottedBaseDataset"}
    assert served["evaluator"] == {"RenamedEvaluator"}
    assert served["postprocessor"] == {"good_postprocess", "fake_judge_postprocess"}
    assert {n for n, (rule, _k) in index.names["loader"].items() if rule == "registered"} == {"RegisteredOnly"}
    reference_index.clear_memory()


def test_judge_uses_a_bridged_dict_postprocessor(fake_reference) -> None:
    from promptweave.errors import JudgeError
    from promptweave.evaluate.judge import GenericLLMEvaluator

    g = GenericLLMEvaluator(prompt_template={"template": "{prediction}"},
                            dict_postprocessor={"type": "fake_judge_postprocess"})
    verdicts = [{"output": "A"}, {"output": "B"}, {"output": "A"}, {"output": "B"}]
    metrics, true_tag = g.grade(verdicts, [{}] * 4, ["x"] * 4)
    assert metrics == {"accuracy": 50.0} and true_tag == "A"
    assert [v["grade"] for v in verdicts] == ["A", "B", "A", "B"]
    with pytest.raises(JudgeError, match="unknown dict_postprocessor"):
        GenericLLMEvaluator(prompt_template={"template": "{prediction}"},
                            dict_postprocessor={"type": "good_postprocess_missing"})
