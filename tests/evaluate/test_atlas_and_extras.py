"""ATLAS's answer-block postprocessor; optional packages noted by lint and refused when a run is planned."""
from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.compat.postprocessors import POSTPROCESSORS
from promptweave.errors import MissingExtraError, PromptweaveWarning
from promptweave.evaluate import build_evaluation, prepare_tasks
from promptweave.evaluate.evaluators import Evaluator
from promptweave.suites.atlas import atlas_pred_postprocess, fix_json_slash


def test_atlas_blocks_in_order_of_preference() -> None:
    reply = '<think>```json\n{"answers": ["no"]}\n```</think>Final:\n```json\n{"answers": ["$\\sqrt{2}$"]}\n```'
    out = POSTPROCESSORS["atlas_pred_postprocess"](reply)
    assert out == {"extract_error": False, "answers": '{"answers": ["$\\\\sqrt{2}$"]}'}
    assert json.loads(out["answers"]) == {"answers": ["$\\sqrt{2}$"]}
    # a backslash before a JSON escape letter is left alone, as the reference (\frac reads as a form feed)
    assert atlas_pred_postprocess('```{"answers": ["\\frac"]}```')["answers"] == '{"answers": ["\\frac"]}'
    assert atlas_pred_postprocess("```\n[1, 2]\n```") == {"extract_error": False, "answers": "[1, 2]"}
    assert atlas_pred_postprocess('so "answers": ["x"]}') == {"extract_error": False,
                                                                "answers": '{\n"answers": ["x"]}'}
    assert atlas_pred_postprocess(None) == {"extract_error": True, "answers": '{"answers": []}'}
    assert atlas_pred_postprocess("nothing") == {"extract_error": True, "answers": '{"answers": []}'}


def test_atlas_think_tags_argument_is_accepted() -> None:
    built = build_evaluation({"pred_postprocessor": {"type": "atlas_pred_postprocess",
                                                     "think_tags": ("<t>", "</t>")}})
    assert built.process_prediction('<t>"answers": [1]</t>') == {"extract_error": True, "answers": '{"answers": []}'}


@given(st.text(alphabet='ab\\"n/ {}q', max_size=30))
def test_fix_json_slash_is_idempotent_and_only_adds_backslashes(text: str) -> None:
    fixed = fix_json_slash(text)
    assert fix_json_slash(fixed) == fixed
    assert fixed.replace("\\", "") == text.replace("\\", "")
    lone = any(text[k] == "\\" and text[k + 1] == "q" and (k == 0 or text[k - 1] != "\\")
               for k in range(len(text) - 1))
    if lone:  # a backslash with none before it and a non-escape letter after it gets doubled
        assert len(fixed) > len(text)


class _NeedsAbsent(Evaluator):
    name = "NeedsAbsent"
    requires = (("promptweave_no_such_module_xyz", "metrics"),)

    def __init__(self) -> None:
        from promptweave.evaluate.extras import note_missing

        note_missing(self)


class _Task:
    def __init__(self, evaluation) -> None:
        self.evaluation = evaluation


def test_missing_package_warns_at_build_and_is_refused_when_planning_a_run() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = _NeedsAbsent()
    assert any(isinstance(w.message, PromptweaveWarning) and "promptweave[metrics]" in str(w.message)
               for w in caught)
    built = build_evaluation(None)
    built.evaluator = ev
    with pytest.raises(MissingExtraError, match=r"\[PW640\].*promptweave_no_such_module_xyz.*promptweave\[metrics\]"):
        prepare_tasks([_Task(built)])
