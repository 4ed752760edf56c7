"""The parts of the ToT form: its settings, the Game24 prompt texts (read from the installed reference, a typed
error without it), the Game of 24 postprocessor and evaluator (no model text is ever evaluated as code)."""
from __future__ import annotations

import importlib.util
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.errors import ReferenceTextMissingError, UnsupportedError
from promptweave.infer.records import Record
from promptweave.infer.tot import ToTSettings, row_text
from promptweave.suites.game24.scoring import Game24Evaluator, equals_24, game24_postprocess
from promptweave.suites.game24.wrapper import Game24Wrapper

needs_reference = pytest.mark.skipif(importlib.util.find_spec("opencompass") is None,
                                     reason="needs the reference's prompt texts: pip install --no-deps "
                                            "opencompass==0.5.4 (.ci/run does)")
WRAPPER = {"type": "Game24PromptWrapper"}


def test_settings_as_the_shipped_config_gives_them() -> None:
    s = ToTSettings.from_settings({"prompt_wrapper": WRAPPER, "method_generate": "propose",
                                   "method_evaluate": "value", "method_select": "greedy", "n_evaluate_sample": 3,
                                   "n_select_sample": 5})
    assert (s.method_generate, s.n_evaluate_sample, s.n_select_sample, s.n_generate_sample) == ("propose", 3, 5, 1)


@pytest.mark.parametrize("bad, field", [({"method_generate": "beam"}, "method_generate"),
                                        ({"n_select_sample": 0}, "n_select_sample"),
                                        ({"n_evaluate_sample": True}, "n_evaluate_sample"),
                                        ({"method_evaluate": "vote"}, "method_evaluate"),
                                        ({"prompt_wrapper": {"type": "CreativeWritingWrapper"}},
                                         "prompt_wrapper.type"),
                                        ({"prompt_wrapper": None}, "prompt_wrapper.type")])
def test_bad_settings_are_typed_errors_naming_the_field(bad, field) -> None:
    with pytest.raises(UnsupportedError) as exc:
        ToTSettings.from_settings({"prompt_wrapper": WRAPPER, **bad}, file="g.py", field="datasets[0].inf")
    assert f"g.py: datasets[0].inf.{field}" in str(exc.value)


def test_without_the_reference_the_prompt_texts_are_a_typed_error(monkeypatch) -> None:
    if importlib.util.find_spec("opencompass") is not None:
        Game24Wrapper()  # read (and cached) while the reference is visible ...
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    with pytest.raises(ReferenceTextMissingError) as exc:  # ... and still refused once it is hidden
        Game24Wrapper(file="g.py", field="datasets[0].infer_cfg.inferencer.prompt_wrapper.type")
    text = str(exc.value)
    assert text.startswith("[PW250] g.py: datasets[0].infer_cfg.inferencer.prompt_wrapper.type")
    assert "opencompass.datasets.game24" in text and "pip install --no-deps opencompass==0.5.4" in text


@needs_reference
def test_wrapper_prompts_and_values() -> None:
    w = Game24Wrapper()
    assert w.propose("4 5 6 10").endswith("Input: 4 5 6 10\nPossible next steps:\n")
    y = "4 + 6 = 10 (left: 5 10 10)\n"
    assert w.propose("4 5 6 10", y).endswith("Input: 5 10 10\nPossible next steps:\n")
    done = "a\nb\n4 * 6 = 24 (left: 24)\n"
    assert w.propose("4 6 1 1", done).endswith("Input: 4 6 1 1\nSteps:" + done)
    assert w.value("x", y).endswith("5 10 10\n")
    last = w.value("4 6 1 1", done + "Answer: 4 * 6 * 1 * 1 = 24\n")
    assert last.endswith("Input: 4 6 1 1\nAnswer: 4 * 6 * 1 * 1 = 24\nJudge:")
    assert w.value_of("x", y, ["...\nsure", "likely", "x\nimpossible"]) == pytest.approx(21.001)
    assert w.value_of("x", "a\nb\nc\nd (left: 1)\n", ["sure"]) == 0  # four steps and no answer line


def test_a_dialogue_prompt_cannot_start_a_search() -> None:
    assert row_text(Record(0, "4 5 6 10")) == "4 5 6 10"
    assert row_text(Record(0, [{"role": "user", "content": "1 2 3 4"}])) == "1 2 3 4"
    with pytest.raises(UnsupportedError, match="string prompt_template"):
        row_text(Record(0, [{"role": "system", "content": "s"}, {"role": "user", "content": "1 2 3 4"}]))


def test_postprocess_takes_the_answer_lines_expression() -> None:
    assert game24_postprocess("steps\nAnswer: (4 + 8) * (6 - 4) = 24\n") == "(4 + 8) * (6 - 4) "
    assert game24_postprocess("4 * 6 = 24 (left: 24)") == "4 * 6 "


def test_evaluator_counts_answers_using_the_puzzles_numbers_that_make_24() -> None:
    preds = ["(4 + 8) * (6 - 4) ", "4 * 6 * 1 ", "8 / (3 - 8 / 3)", "__import__('os').getcwd()", "24 / (1 - 0)"]
    refs = ["4 4 6 8", "4 6 1 1", "3 3 8 8", "1 2 3 4", "24 1 0"]
    s = Game24Evaluator().score(preds, refs)
    assert s.correct == [True, False, True, False, True]
    assert s.metrics == {"acc score": 3 / 5}


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789+-*/^() .ab_", max_size=40))
def test_equals_24_never_raises_and_agrees_with_exact_arithmetic(text) -> None:
    got = equals_24(text)
    assert isinstance(got, bool)
    if got:  # then it is plain arithmetic: recompute it independently with Fractions
        expr = text.replace("^", "**")
        assert all(c in "0123456789+-*/() .*" for c in expr)
        import re

        value = eval(re.sub(r"(\d+\.?\d*|\.\d+)", r"Fraction('\1')", expr), {"Fraction": Fraction})  # noqa: S307
        assert value == 24


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_postprocess_never_raises(text) -> None:
    assert isinstance(game24_postprocess(text), str)
