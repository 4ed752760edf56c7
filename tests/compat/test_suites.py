"""The benchmark suites layer: suites join the compat registries by one line in ``compat/suites.py``, are imported
only when a name they hold is asked for, and the generic engine never imports one."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from promptweave.compat import suites
from promptweave.compat.evaluators import EVALUATORS
from promptweave.compat.loaders import LOADERS
from promptweave.compat.postprocessors import POSTPROCESSORS
from promptweave.evaluate import build_evaluation

SRC = Path(__file__).resolve().parents[2] / "src" / "promptweave"


def test_the_engine_never_imports_a_suite() -> None:
    found = []
    for path in SRC.rglob("*.py"):
        if path.relative_to(SRC).parts[0] != "suites":
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                found += [f"{path.relative_to(SRC)}: {n}" for n in names if n.startswith("promptweave.suites")]
    assert found == []


def test_suite_names_resolve_through_the_compat_registries() -> None:
    from promptweave.suites.cibench import CIBenchEvaluator
    from promptweave.suites.game24.data import game24
    from promptweave.suites.game24.scoring import Game24Evaluator, game24_postprocess

    assert EVALUATORS["CIBenchEvaluator"] is CIBenchEvaluator
    assert EVALUATORS.get("Game24Evaluator") is Game24Evaluator and "Game24Evaluator" in EVALUATORS
    assert POSTPROCESSORS["game24_postprocess"] is game24_postprocess
    assert LOADERS.get("Game24Dataset") is game24
    assert "LawBenchEvaluator_3_8" in set(EVALUATORS) and "AccEvaluator" in EVALUATORS
    assert suites.suite_of("EVALUATORS", "BFCLRelevanceEvaluator") == "promptweave.suites.bfcl"
    assert EVALUATORS.get("NoSuchEvaluator") is None and "NoSuchEvaluator" not in EVALUATORS
    with pytest.raises(KeyError):
        EVALUATORS["NoSuchEvaluator"]


def test_suites_are_imported_only_when_one_of_their_names_is_asked_for() -> None:
    code = ("import sys\n"
            "from promptweave.evaluate import build_evaluation\n"
            "build_evaluation({'evaluator': {'type': 'AccEvaluator'}})\n"
            "before = sorted(m for m in sys.modules if m.startswith('promptweave.suites'))\n"
            "build_evaluation({'evaluator': {'type': 'LawBenchEvaluator_3_8'}})\n"
            "after = 'promptweave.suites.lawbench' in sys.modules\n"
            "print(before, after)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] True", out.stderr


def test_a_new_suite_is_its_module_and_one_line(tmp_path, monkeypatch) -> None:
    pkg = tmp_path / "my_suites"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "shouting.py").write_text(
        "from promptweave.evaluate.evaluators import AccEvaluator\n\n\n"
        "class ShoutingEvaluator(AccEvaluator):\n"
        "    name = 'ShoutingEvaluator'\n\n\n"
        "def shout(text):\n"
        "    return str(text).upper()\n\n\n"
        "EVALUATORS = {'ShoutingEvaluator': ShoutingEvaluator}\n"
        "POSTPROCESSORS = {'shout_postprocess': shout}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(suites, "SUITES", suites.SUITES + ("my_suites.shouting",))  # the one line
    monkeypatch.setattr(suites, "_tables", {})
    ev = build_evaluation({"evaluator": {"type": "ShoutingEvaluator"},
                           "pred_postprocessor": {"type": "shout_postprocess"}})
    assert ev.process_prediction("a") == "A"
    assert ev.score(["A", "B"], ["A", "A"]).metrics["accuracy"] == 50.0
