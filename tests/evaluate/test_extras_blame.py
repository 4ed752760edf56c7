"""A missing optional package is blamed on the part of the task that needs it: the retriever's field for a
retriever's package, the evaluator's for the evaluator's, and one refusal naming every part when several lack one.

Packages are really absent: a ``None`` entry in ``sys.modules`` (import fails, ``find_spec`` finds nothing) for an
installed optional package, or a module name that exists nowhere."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from promptweave.errors import MissingExtraError
from promptweave.evaluate.config import build_evaluation
from promptweave.evaluate.extras import require_task
from promptweave.run.lint import lint_file

ROOT = Path(__file__).resolve().parents[2]


class NeedsAbsent:
    """A part whose package is installed nowhere."""

    name = "NeedsAbsent"
    requires = (("pw_absent_evaluator_pkg", "metrics"),)

    def score(self, predictions, golds, ctx=None):  # pragma: no cover - never scored here
        return {}


class AbsentRetriever:
    name = "AbsentRetriever"
    requires = (("pw_absent_retriever_pkg", "embed"),)


def test_the_topk_retriever_is_blamed_for_sentence_transformers(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as in an install without [embed]
    report = lint_file(ROOT / "examples" / "retrievers.py")
    topk = [p for p in report.problems if "arithmetic_topk" in p and "[PW640]" in p]
    assert topk, report.problems
    assert all("datasets[1].infer_cfg.retriever.type" in p and "TopkRetriever needs" in p for p in topk), topk
    assert not any("eval_cfg.evaluator.type" in p for p in topk), topk
    assert all("promptweave[embed]" in p for p in topk)


def test_each_part_is_named_and_the_first_gives_the_field() -> None:
    evaluation = build_evaluation({"evaluator": {"type": "AccEvaluator"}}, where="datasets[3].eval_cfg")
    require_task(evaluation, task="d × m", retriever=None)  # nothing missing: no refusal
    with pytest.raises(MissingExtraError) as info:
        require_task(evaluation, task="d × m", retriever=AbsentRetriever(),
                     retriever_where="datasets[3].infer_cfg.retriever")
    assert info.value.field == "datasets[3].infer_cfg.retriever.type" and info.value.value == "AbsentRetriever"
    evaluation.evaluator = NeedsAbsent()
    with pytest.raises(MissingExtraError) as info:
        require_task(evaluation, task="d × m", retriever=AbsentRetriever(),
                     retriever_where="datasets[3].infer_cfg.retriever")
    err = info.value
    assert err.field == "datasets[3].eval_cfg.evaluator.type" and err.value == "NeedsAbsent"
    assert "NeedsAbsent needs the 'pw_absent_evaluator_pkg' package" in err.message
    assert "AbsentRetriever needs the 'pw_absent_retriever_pkg' package" in err.message
    assert err.expected == "pip install 'promptweave[embed,metrics]'"


def test_a_postprocessor_is_blamed_in_its_own_field() -> None:
    evaluation = build_evaluation({"evaluator": {"type": "AccEvaluator"}}, where="datasets[0].eval_cfg")

    def needs_absent(text: str) -> str:  # pragma: no cover - never called
        return text

    needs_absent.requires = ("pw_absent_post_pkg",)  # type: ignore[attr-defined]
    evaluation.dataset_postprocessor = needs_absent
    with pytest.raises(MissingExtraError) as info:
        require_task(evaluation, task="d × m")
    assert info.value.field == "datasets[0].eval_cfg.dataset_postprocessor.type"
    assert "needs_absent needs the 'pw_absent_post_pkg' package" in info.value.message
