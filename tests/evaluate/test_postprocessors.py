"""Postprocessors against hand-worked expectations of the reference behaviour (OpenCompass 0.5.4)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.compat.postprocessors import POSTPROCESSORS
from promptweave.errors import EvaluationError, RegexTimeoutError
from promptweave.evaluate import build_evaluation, build_postprocessor
from promptweave.evaluate import postprocess as pp
from promptweave.suites import bbh, gsm8k, humaneval, infinitebench, lcsts, mathbench, mgsm, teval, theoremqa


@pytest.mark.parametrize("text,want", [
    ("The answer is (C).", "C"),
    ("答案是A", "A"),
    ("答案：B", "B"),
    ("B. Paris is correct", "B"),
    ("I think it is D because A is wrong", "D"),  # no explicit commitment: the cushion takes the first option
    ("answer: b", "B"),  # '(?i)ANSWER\s*:\s*([ABCD])' matches 'b'? no: the class is upper-case only -> cushion
    ("nothing here", ""),
    ("", ""),
    ("The correct answer is \\boxed{C}", "C"),
])
def test_first_option(text: str, want: str) -> None:
    if text == "answer: b":  # worked by hand: no pattern matches 'b'; cushion '([ABCD])' finds nothing either
        want = ""
    assert pp.first_option_postprocess(text, "ABCD") == want


def test_first_option_cushion_and_option_set() -> None:
    # without the cushion only the explicit patterns count
    # the reference's '(\s|^)X[,...]' pattern captures the space, holds no option and so never decides mid-text;
    # at the very start its group is empty and the whole match ('D,') decides
    assert pp.first_option_postprocess("Maybe D, maybe not", "ABCD", cushion=False) == ""
    assert pp.first_option_postprocess("D, maybe not", "ABCD", cushion=False) == "D"
    assert pp.first_option_postprocess("xxDxx", "ABCD", cushion=False) == ""
    assert pp.first_option_postprocess("xxDxx", "ABCD", cushion=True) == "D"
    assert pp.first_option_postprocess("E is right, A is not", "ABCDE") == "E"
    assert pp.first_option_postprocess("E is right, A is not", "ABCD") == "A"


def test_capitals_options_numbers() -> None:
    assert pp.first_capital_postprocess("so, Beta") == "B"
    assert pp.first_capital_postprocess("ünïcödé Ä") == "Ä"  # str.isupper, as the reference
    assert pp.last_capital_postprocess("A then c") == "A"
    assert pp.first_capital_postprocess_multi("answer: ACD and B") == "ACD"
    assert pp.last_option_postprocess("A or B? B. Final: C", "ABCD") == "C"
    assert pp.last_option_postprocess("none", "ABCD") == ""
    assert pp.first_number_postprocess("x -3.5 y 7") == -3.5
    assert infinitebench.infinitebench_first_number_postprocess("v 12.5 and 3") == "12.5"
    assert infinitebench.infinitebench_first_number_postprocess("none") is None


def test_gsm8k() -> None:
    assert gsm8k.gsm8k_dataset_postprocess("She pays 2 + 3 = 5\n#### 1,234") == "1234"
    assert gsm8k.gsm8k_postprocess("So 3 + 4 = 7. The answer is 7.\n\nQuestion: what is 9?") == "7"
    assert gsm8k.gsm8k_postprocess("It costs -2.50 dollars") == "-2.50"
    assert gsm8k.gsm8k_postprocess("no numbers") == "NULL"


def test_math() -> None:
    assert pp.math_postprocess_v2("so the result is $\\boxed{\\frac{1}{2}}$.") == "\\frac{1}{2}"
    assert pp.math_postprocess_v2("We get \\boxed{{5}}") == "5"  # double braces stripped
    assert pp.math_postprocess_v2("Thus the final answer is $12$ dollars. More") == "12"
    assert pp.math_postprocess("First. The final answer is 7") == "7"


def test_bbh() -> None:
    assert bbh.bbh_mcq_postprocess("Let's think. So the answer is (B).") == "B"
    assert bbh.bbh_mcq_postprocess("So the answer is C") == "C"
    assert bbh.bbh_freeform_postprocess("So the answer is **Yes**.") == "Yes"
    assert bbh.bbh_freeform_postprocess("the answer is: true, obviously") == "True"
    assert bbh.bbh_freeform_postprocess("The answer is 1, 2") == "1, 2"  # numbers keep their commas
    assert bbh.bbh_freeform_postprocess("answer is red , blue") == "red blue"


def test_code_and_text() -> None:
    assert humaneval.humaneval_postprocess_v2("Here:\n```python\n  return 1\n```\ntail") == "return 1\n"
    assert humaneval.humaneval_postprocess_v2("   no block") == "no block"
    assert humaneval.humaneval_internal_v2_postprocess("   x = 1\n    return x\nprint(3)") == "    x = 1\n    return x"
    assert pp.xml_tag_postprocessor("<a>1</a> <a> 2 </a>", "<a>") == "2"
    assert pp.xml_tag_postprocessor("nothing", "<a>") == "NO ANSWER FOUND"
    assert pp.general_postprocess("The Eiffel Tower, in Paris.") == "Eiffel Tower"
    assert lcsts.lcsts_postprocess("1. 今天天气好。\n第二行") == "今天天气好"
    assert pp.first_line_lstrip_postprocess("\n\nfirst\nsecond") == "first"
    assert mathbench.mathbench_postprocess("The answer is 1,234 or 5", "mathbench-college") == "1234"
    assert mathbench.mathbench_postprocess("we get 3 then 4", "x") == "4"
    assert mgsm.mgsm_postprocess("Antwort: 1.000 und 42.", "de") == "42"
    assert mgsm.mgsm_postprocess("no prefix 3", "en") == ""
    assert theoremqa.theoremqa_postprocess("so the answer is 3.5.") == "3.5"
    assert pp.extract_non_reasoning_content("a<think>x</think> b") == "a b"
    assert pp.extract_non_reasoning_content("x</think> b") == "b"


def test_kwargs_from_config_are_honoured_and_checked() -> None:
    f = build_postprocessor({"type": "first_option_postprocess", "options": "ABCDE", "cushion": False}, "p")
    assert f("xxExx") == "" and f("The answer is E") == "E"
    with pytest.raises(EvaluationError, match="takes no argument 'colour'") as ei:
        build_postprocessor({"type": "first_option_postprocess", "options": "AB", "colour": 1}, "eval_cfg.pred")
    assert ei.value.field == "eval_cfg.pred.colour"
    with pytest.raises(EvaluationError, match="needs the argument 'answer_pattern'"):
        build_postprocessor({"type": "match_answer_pattern"}, "p")
    f = build_postprocessor({"type": "match_answer_pattern", "answer_pattern": r"ANSWER:\s*(\w+)"}, "p")
    assert f("ANSWER: yes") == "yes" and f("none") == ""


def test_config_patterns_run_with_a_timeout() -> None:
    ev = build_evaluation({"pred_postprocessor": {"type": "match_answer_pattern", "answer_pattern": r"(a+)+$"}})
    with pytest.raises(RegexTimeoutError) as ei:
        ev.process_prediction("a" * 5000 + "!")
    assert ei.value.code == "PW620" and "(a+)+$" in str(ei.value)
    with pytest.raises(EvaluationError, match="invalid regular expression"):
        pp.match_answer_pattern("x", "(unclosed")


EXTRACTORS = ["first_option_postprocess", "first_capital_postprocess", "last_option_postprocess",
              "gsm8k_postprocess", "math_postprocess_v2", "math_postprocess", "bbh_mcq_postprocess",
              "bbh_freeform_postprocess", "first_number_postprocess", "humaneval_postprocess_v2",
              "general_postprocess", "mathbench_postprocess", "TheoremQA_postprocess", "lcsts_postprocess",
              "first_capital_postprocess_multi", "humaneval_internal_v2_postprocess", "Xsum_postprocess",
              "InfiniteBench_first_number_postprocess", "extract_non_reasoning_content", "teval_postprocess",
              "material_postprocessor", "xml_tag_postprocessor", "mgsm_postprocess"]


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
       | st.from_regex(r"(The answer is|答案是|\\boxed\{|####|```python\n)?.{0,40}", fullmatch=True))
def test_answer_extraction_never_raises(text: str) -> None:
    for name in EXTRACTORS:
        fn = POSTPROCESSORS[name]
        kwargs = {"options": "ABCD"} if "option" in name else {"tag": "<a>"} if "xml" in name else \
            {"lang": "en"} if "mgsm" in name else {}
        out = fn(text, **kwargs)
        assert out is None or isinstance(out, (str, float))


def test_teval() -> None:
    assert teval.teval_postprocess('```json\n{{"a": 1}}\n```<|im_end|>junk') == '{"a": 1}'
    assert teval.teval_postprocess(None) == "None"


def test_material_tag() -> None:
    assert pp.material_postprocessor("x <MATERIAL> NaCl </material>") == "NaCl"
    assert pp.material_postprocessor(None) == "" and pp.material_postprocessor("none") == ""
