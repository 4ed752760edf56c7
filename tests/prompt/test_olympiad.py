"""OlympiadBench's row-written prompt (``suites/olympiadbench/template.py``) against OpenCompass's own code (``olympiad_oracle``),
over every combination of the inputs, and through the whole prompt path (fill, meta template, render)."""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder
from promptweave.errors import DataError, TemplateError
from promptweave.suites.olympiadbench.template import OlympiadBenchRawTemplate, OlympiadBenchTemplate, instruction
from tests.prompt.olympiad_oracle import reference

REF = reference()
needs_reference = pytest.mark.skipif(REF is None, reason="needs opencompass's source to read its OlympiadBench code "
                                     "from: pip install --no-deps opencompass==0.5.4 (.ci/run does)")

LANGUAGES = ["English", "Chinese", "chinese", "", None]
SUBJECTS = ["Math", "Physics", "math", None]
QUESTION_TYPES = ["Open-ended", "Theorem proof", "theorem proof", "", None]
ANSWER_TYPES = ["Numerical", "Expression", "Equation", "Interval", "Tuple", "Need_human_evaluate", "Numerical-Tuple",
                "Expression-Numerical", "Numerical,Numerical", "Numerical,Expression", "Expression,Equation,Interval",
                "Interval, Numerical", "Equation-Tuple,Numerical", "Numerical,", "Tuple,Numerical", "Text", "",
                "-Numerical", None]
MULTIPLE = [False, True, None, 0, 1, "yes"]
UNITS = ["", "m/s", None, 0, "度"]


def _ours_instruction(lang: Any, subj: Any, qt: Any, at: Any, multi: Any, unit: Any) -> str | type:
    try:
        head, tail = instruction(lang, subj, qt, at, multi, unit)
    except ValueError:
        return ValueError
    return head + "{problem}" + tail


def _reference_instruction(lang: Any, subj: Any, qt: Any, at: Any, multi: Any, unit: Any) -> str | type:
    try:
        return REF["OlympiadBenchPrompter"]().make_prompt(language=lang, subject=subj, question_type=qt,
                                                          answer_type=at, is_multiple_answer=multi, unit=unit)
    except (ValueError, TypeError, AttributeError):
        return ValueError


@needs_reference
def test_the_instruction_equals_the_references_for_every_combination() -> None:
    combos = list(itertools.product(LANGUAGES, SUBJECTS, QUESTION_TYPES, ANSWER_TYPES, MULTIPLE, UNITS))
    differ = [c for c in combos if _ours_instruction(*c) != _reference_instruction(*c)]
    assert not differ, f"{len(differ)}/{len(combos)} differ, e.g. {differ[:3]}"
    # the table covers the wording that matters: every sentence form occurs
    texts = {_ours_instruction(*c) for c in combos} - {ValueError}
    assert len(texts) > 100


_TEXT = st.lists(st.sampled_from(list("ab ,-{}\\\n中") + ["{problem}", "{solution}", "{prompt}", "Numerical",
                                                          "Tuple", "Interval", "\\boxed{}"]),
                 max_size=12).map("".join)
_ROW = st.fixed_dictionaries(
    {},
    optional={"problem": _TEXT, "language": st.sampled_from(LANGUAGES), "subject": st.sampled_from(SUBJECTS),
              "question_type": st.sampled_from(QUESTION_TYPES),
              "answer_type": st.one_of(st.sampled_from(ANSWER_TYPES), _TEXT),
              "is_multiple_answer": st.sampled_from(MULTIPLE), "unit": st.sampled_from(UNITS),
              "solution": _TEXT})


def _reference_turn(row: dict, token: str, raw: bool) -> str | type:
    try:
        if raw:
            (msg,) = REF["OlympiadBenchRawTemplate"]().generate_item(row)
            return msg["content"]
        return REF["OlympiadBenchTemplate"]().generate_item(row, output_field="solution",
                                                             output_field_replace_token=token)["prompt"]
    except (ValueError, TypeError, AttributeError):
        return ValueError


def _our_turn(row: dict, token: str, raw: bool) -> str | type:
    tpl = OlympiadBenchRawTemplate() if raw else OlympiadBenchTemplate()
    tpl.bind_output("solution", token)
    try:
        return tpl.text(row)
    except DataError as exc:
        assert exc.field == "answer_type" and "names no answer kind" in str(exc)
        return ValueError


@needs_reference
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row=_ROW, token=st.sampled_from(["", "<ANS>", "{problem}"]), raw=st.booleans())
def test_the_filled_turn_equals_the_references(row: dict, token: str, raw: bool) -> None:
    """Braces in the problem ({solution}, {problem}, {prompt}) are filled exactly as the reference fills them."""
    assert _our_turn(row, token, raw) == _reference_turn(row, token, raw)


# -- through the engine: the same prompt as a plain template holding the reference's text ------------------------
ROWS = [
    {"problem": "Find $x$ if $x^2=4$ [q0].", "solution": "2", "language": "English", "subject": "Math",
     "question_type": "Open-ended", "answer_type": "Numerical", "is_multiple_answer": False, "unit": None},
    {"problem": "求 {solution} 的值 [q1]", "solution": "3", "language": "Chinese", "subject": "Physics",
     "question_type": "Open-ended", "answer_type": "Expression,Numerical", "is_multiple_answer": True, "unit": "m"},
    {"problem": "Prove it [q2].", "solution": "-", "language": "English", "subject": "Physics",
     "question_type": "Theorem proof", "answer_type": None, "is_multiple_answer": False, "unit": ""},
]
READER = {"input_columns": ["problem", "language", "subject", "question_type", "answer_type", "is_multiple_answer",
                            "unit"], "output_column": "solution"}
LM = {"abbr": "lm", "kind": "lm", "meta_template": {
    "begin": "<s>", "round": [{"role": "HUMAN", "begin": "<|user|>\n", "end": "<|end|>\n"},
                              {"role": "BOT", "begin": "<|assistant|>\n", "end": "<|end|>\n", "generate": True}]}}
API = {"abbr": "api", "kind": "api", "meta_template": {
    "round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}]}}


def _dataset(template: dict, rows: list[dict]) -> DatasetSpec:
    cfg = {"abbr": "ob", "reader_cfg": READER,
           "infer_cfg": {"prompt_template": template, "retriever": {"type": "ZeroRetriever"},
                         "inferencer": {"type": "GenInferencer"}}}
    return DatasetSpec.from_config(cfg, train=rows, test=rows, file="ob.py")


@needs_reference
@pytest.mark.parametrize("model", [LM, API], ids=["plain-lm", "api"])
@pytest.mark.parametrize("raw", [False, True], ids=["template", "raw"])
def test_rendered_prompts_equal_a_plain_template_holding_the_references_text(model: dict, raw: bool) -> None:
    kind = "OlympiadBenchRawTemplate" if raw else "OlympiadBenchTemplate"
    ours = _dataset({"type": kind}, ROWS)
    expected_rows = [{**r, "expected": _reference_turn(r, "", raw)} for r in ROWS]
    plain = ({"type": "RawPromptTemplate", "messages": [{"role": "user", "content": "{expected}"}]} if raw else
             {"type": "PromptTemplate", "template": {"round": [{"role": "HUMAN", "prompt": "{expected}"}]}})
    same = _dataset(plain, expected_rows)
    spec = ModelSpec.from_config(model)
    got = [r.rendered for r in PromptBuilder(ours, spec).build_all()]
    want = [r.rendered for r in PromptBuilder(same, spec).build_all()]
    assert got == want
    # row 1's problem holds "{solution}": the template form fills it (with the generation token), the raw form
    # sends it as written, each as its reference class does
    assert ("{solution}" in json.dumps(got[1], ensure_ascii=False)) == raw


def test_without_the_reference_the_wording_is_still_checked() -> None:
    head, tail = instruction("English", "Math", "Open-ended", "Numerical", False, "m")
    assert head == ("The following is an open-ended problem from an International Math competition. The answer of "
                    "The problem should be a numerical value. Please calculate the answer according to the given "
                    "requirements and the information provided. Please use LaTeX format to represent the variables "
                    "and formulas used in the solution process and results. Please end your solution with \"So the "
                    "final answer is \\boxed{answer}(unit).\" and give the result explicitly, note that the unit of "
                    "the answer should not be included in \\boxed{}.\n")
    assert tail == "\n\nPlease reason step by step, and put your final answer within \\boxed{}."
    head, _ = instruction("Chinese", "Physics", "Open-ended", "Expression,Numerical", True, "")
    assert head.startswith("以下是中国物理竞赛中的解答题，题目有多个答案，答案类型分别为表达式、数值。")
    assert "\\boxed{用英文逗号连接的多个答案}。" in head


def test_a_row_whose_answer_type_names_no_kind_is_a_typed_error_naming_the_row() -> None:
    rows = [dict(ROWS[0]), {**ROWS[0], "answer_type": "Text"}]
    builder = PromptBuilder(_dataset({"type": "OlympiadBenchTemplate"}, rows), ModelSpec.from_config(API))
    assert builder.build(0).rendered
    with pytest.raises(DataError) as ei:
        builder.build(1)
    assert ei.value.field == "test[1].answer_type" and ei.value.file == "ob.py" and "'Text'" in str(ei.value)


def test_the_class_takes_no_settings() -> None:
    with pytest.raises(TemplateError) as ei:
        _dataset({"type": "OlympiadBenchTemplate", "template": "{problem}"}, ROWS)
    assert ei.value.field == "dataset.infer_cfg.prompt_template.template" and "takes no settings" in str(ei.value)


CONFIG = '''
reader = dict(input_columns=["problem", "language", "subject", "question_type", "answer_type",
                             "is_multiple_answer", "unit"], output_column="solution")
ob_datasets = [dict(abbr="ob_" + kind, path="rows.jsonl", reader_cfg=reader,
                    infer_cfg=dict(prompt_template=dict(type=kind), retriever=dict(type="ZeroRetriever"),
                                   inferencer=dict(type="GenInferencer")),
                    eval_cfg=dict(evaluator=dict(type="AccEvaluator")))
               for kind in ("OlympiadBenchTemplate", "OlympiadBenchRawTemplate")]
'''


def test_lint_and_view_a_config_written_around_them(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS),
                                         encoding="utf-8")
    cfg = tmp_path / "ob_gen.py"
    cfg.write_text(CONFIG)
    runner = CliRunner()
    for extra, prompts in (([], 12), (["--no-data"], 4)):  # 2 datasets × 2 stand-in models × 3 rows / 1 stand-in
        res = runner.invoke(app, ["lint", *extra, str(cfg)])
        assert res.exit_code == 0, res.output
        assert f"2 dataset(s) × dataset config, stand-in models, {prompts} prompt(s)" in res.output
    (tmp_path / "eval.py").write_text(CONFIG + "datasets = ob_datasets\nmodels = [" + repr(API) + "]\n")
    res = runner.invoke(app, ["view", str(tmp_path / "eval.py"), "--json", "-i", "1"])
    assert res.exit_code == 0, res.output
    shown = [r["prompt"] for r in json.loads(res.stdout)]
    assert len(shown) == 2
    assert "题目有多个答案，答案类型分别为表达式、数值" in json.dumps(shown, ensure_ascii=False)
