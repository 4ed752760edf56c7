"""AISBench's own evaluators and postprocessors (suites/aisbench.py), chosen by the module a config imports a name
from: an ``ais_bench`` import gets AISBench's rules, an ``opencompass`` one OpenCompass's."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.compat.origin import lookup, module_of
from promptweave.data.loaders import loader_name
from promptweave.evaluate import build_evaluation
from promptweave.evaluate import evaluators as ev
from promptweave.sandbox.refs import RefName
from promptweave.suites import aisbench as ais
from promptweave.suites import bbh, humaneval
from promptweave.suites.bbh import bbh_freeform_postprocess as oc_bbh_freeform

AIS_DATASETS = "ais_bench.benchmark.datasets"
OC_DATASETS = "opencompass.datasets"


def _evaluation(name: str, module: str, **eval_cfg):
    return build_evaluation({"evaluator": {"type": RefName(name, module)}, **eval_cfg})


def test_the_import_module_picks_the_rules():
    assert isinstance(_evaluation("BBHEvaluator", AIS_DATASETS).evaluator, ais.BBHEvaluator)
    assert isinstance(_evaluation("BBHEvaluator", OC_DATASETS).evaluator, bbh.BBHEvaluator)
    assert isinstance(_evaluation("BBHEvaluator", "").evaluator, bbh.BBHEvaluator)  # a bare name: OpenCompass's
    # AISBench's two MATHEvaluators: openicl's is math-verify, datasets' the MATH string rules
    assert isinstance(_evaluation("MATHEvaluator", "ais_bench.benchmark.openicl.icl_evaluator").evaluator,
                      ais.MATHVerifyEvaluator)
    assert isinstance(_evaluation("MATHEvaluator", AIS_DATASETS).evaluator, ev.MATHEvaluator)
    # names only AISBench has resolve from any import
    assert isinstance(_evaluation("TEXTEvaluator", "").evaluator, ais.TEXTEvaluator)


def test_origin_helpers():
    assert module_of(RefName("X", "ais_bench.benchmark.datasets")) == "ais_bench.benchmark.datasets"
    assert module_of("opencompass.datasets.bbh.BBHEvaluator") == "opencompass.datasets.bbh"
    assert module_of("BBHEvaluator") == ""
    table = {"X": 1, "ais_bench:X": 2, "ais_bench.benchmark.openicl:X": 3}
    assert lookup(table, RefName("X", "ais_bench.benchmark.openicl.icl_evaluator"), "X") == 3
    assert lookup(table, RefName("X", "ais_bench.benchmark.datasets"), "X") == 2
    assert lookup(table, RefName("X", "opencompass.datasets"), "X") == 1
    # a loader's name keeps its module through loader_name
    assert loader_name({"type": RefName("MTBenchDataset", AIS_DATASETS)}).module == AIS_DATASETS


@pytest.mark.parametrize(("text", "aisbench", "opencompass"), [
    ("So the answer is True.", "True", "True"),
    ("So the answer is: True", "So the answer is: True", "True"),  # AISBench splits on "answer is " only
    ("the answer is false", "false", "False"),  # no case folding in AISBench's
    ("So the answer is **False**.", "False", "False"),
    ("So the answer is True, clearly", "True, clearly", "True"),
    ("answer is 1 answer is 2", "1", "2"),  # AISBench takes the first split, OpenCompass the last
])
def test_bbh_freeform_postprocess_differs_from_opencompass(text, aisbench, opencompass):
    assert ais.bbh_freeform_postprocess(text) == aisbench
    assert oc_bbh_freeform(text) == opencompass


def test_bbh_evaluator_is_case_sensitive_and_leaves_golds_alone():
    s = ais.BBHEvaluator().score(["So the answer is True.", "the answer is false", "So the answer is: True"],
                                 ["True", "False", "True"])
    assert s.correct == [True, False, False]
    assert s.metrics == {"score": pytest.approx(100 / 3)}


def test_gpqa_simple_eval_postprocess():
    assert ais.GPQA_Simple_Eval_postprocess("Thinking\nANSWER: d") == "d"
    assert ais.GPQA_Simple_Eval_postprocess("answer : C") == "C"
    assert ais.GPQA_Simple_Eval_postprocess("The answer is A") is None


@given(st.text(max_size=80))
def test_postprocessors_take_any_text(text):
    out = ais.GPQA_Simple_Eval_postprocess(text)
    assert out is None or out.upper() in "ABCD"
    assert isinstance(ais.bbh_freeform_postprocess(text), str)


def test_textvqa_accuracy_is_the_vqa_rule():
    def golds(*answers):
        return [{"answer": a, "answer_id": i} for i, a in enumerate(answers)]

    refs = [golds(*["nokia"] * 7, *["nokla"] * 3), golds(*["23"] * 10), golds(*["stop"] * 4, *["stop sign"] * 6),
            golds("red", "red", *["dark red"] * 8)]
    s = ais.TEXTEvaluator().score(["Nokia.", "twenty three", "Stop", "dark red"], refs)
    # "nokia" matches 6 of the other 9 golds for each of its 7 copies (min(1, 6/3)) and 7 for each "nokla": 1.0;
    # "twenty three" is no number word: 0; "stop" matches 3 or 4 others: 1.0; "dark red": 1.0
    assert s.metrics["accuracy"] == pytest.approx(75.0)
    assert s.correct == [True, False, True, True]
    # "others" are the golds unequal to this one as whole records: identical records exclude each other
    same = ais.TEXTEvaluator().score(["nokia"], [[{"answer": "nokia"}] * 4])
    assert same.metrics["accuracy"] == 0.0


def test_textvqa_normalisation_steps():
    assert ais.vqa_digits_articles("The Two cats dont") == "2 cats don't"
    assert ais.vqa_punctuation("a-b") == "a b"
    assert ais.vqa_punctuation("1,000 cats!") == "1000 cats"
    assert ais.TEXTEvaluatorForGlm4v().prepare("x <|begin_of_box|> 7 <|end_of_box|>") == "7"
    assert ais.TEXTEvaluatorForVita().prepare("noise ☞ >! answer") == "answer"


def test_mtbench_evaluator_compares_a_reply_with_the_reference_list():
    s = ais.MTBenchEvaluator().score(["E", "4", "Leaves fall"], [["sneeze"], ["4", "12"], ["", ""]])
    assert s.metrics == {"accuracy": 0.0}  # AISBench's rule: a string never equals a list
    s = ais.MTBenchEvaluator().score(["Eh", "x"], ["sneeze", "x"])
    assert s.correct == [True, True]  # a longer reply is read as the sound its first letter names


def test_math_verify_evaluator_parses_the_gold_as_written_first():
    pytest.importorskip("math_verify")
    s = ais.MATHVerifyEvaluator().score(["So $\\boxed{2}$.", "$\\boxed{0.5}$", "9"],
                                        ["We add: $1+1=2$. So $\\boxed{2}$.", "$\\boxed{\\frac{1}{2}}$", "$9$"])
    assert s.correct == [True, True, False]  # an unboxed "9" is not extracted (try_extract_without_anchor off)


HUMANEVAL_REPLIES = ["Here it is:\n```python\n    return x + 1\n```", "```python\ndef inc(x):\n    return x + 1\n```",
                     "    return x + 1\n", "```\n  \n    return x + 2\n```\nand ```python\n    return x + 1\n```"]


def test_humaneval_postprocessors_keep_the_indentation_opencompass_strips():

    body = HUMANEVAL_REPLIES[0]
    assert ais.humaneval_postprocess_v2(body) == "    return x + 1\n"
    assert humaneval.humaneval_postprocess_v2(body) == "return x + 1\n"
    assert ais.humaneval_postprocess_v3(HUMANEVAL_REPLIES[3]) == "    return x + 1\n"
    assert ais.humaneval_postprocess_v2(HUMANEVAL_REPLIES[3]) == "  \n    return x + 2\n"
    # chosen by the import: AISBench's humaneval config imports it from ais_bench.benchmark.datasets
    got = _evaluation("HumanEvalEvaluator", AIS_DATASETS,
                      pred_postprocessor={"type": RefName("humaneval_postprocess_v2", AIS_DATASETS)})
    assert got.process_prediction(body) == "    return x + 1\n"
    got = _evaluation("HumanEvalEvaluator", OC_DATASETS,
                      pred_postprocessor={"type": RefName("humaneval_postprocess_v2", OC_DATASETS)})
    assert got.process_prediction(body) == "return x + 1\n"


def test_humaneval_scores_differ_by_origin_on_replies_that_are_the_body():
    from promptweave.evaluate import EvalContext
    from tests.codebox import CODE_SANDBOX

    row = {"prompt": "def inc(x):\n    \"\"\"x plus one\"\"\"\n", "test": "def check(f):\n    assert f(1) == 2\n",
           "entry_point": "inc"}
    rows = [row] * len(HUMANEVAL_REPLIES)
    scores = {}
    for module in (AIS_DATASETS, OC_DATASETS):
        evaluation = _evaluation("HumanEvalEvaluator", module, k=[1],
                                 pred_postprocessor={"type": RefName("humaneval_postprocess_v2", module)})
        preds = [evaluation.process_prediction(r) for r in HUMANEVAL_REPLIES]
        s = evaluation.evaluator.score(preds, ["HumanEval/0"] * len(preds),
                                       EvalContext(rows=rows, allow_code_exec=True, code_sandbox=CODE_SANDBOX))
        scores[module] = s.correct
    # the indented bodies pass after the prompt's signature with AISBench's rule, not with OpenCompass's
    assert scores[AIS_DATASETS] == [True, True, True, False]
    assert scores[OC_DATASETS] == [False, True, False, False]
