"""Native evaluators against hand-worked expectations of the reference behaviour (metric names, percentages)."""
from __future__ import annotations

import pytest

from promptweave.compat.evaluators import EVALUATORS
from promptweave.errors import EvaluationError
from promptweave.evaluate import EvalContext, build_evaluation
from promptweave.evaluate import evaluators as ev
from promptweave.suites import babilong, bbh, drop, gsm8k, longbench, mrcr, natural_questions, needlebench, triviaqa


def test_acc_compares_as_text_without_stripping() -> None:
    s = ev.AccEvaluator().score(["A", 1, " B"], ["A", "1", "B"])
    assert s.correct == [True, True, False] and s.metrics == {"accuracy": pytest.approx(200 / 3)}


def test_acc_with_details_keeps_prompts() -> None:
    s = ev.AccwithDetailsEvaluator().score(["A", "B"], ["A", "C"], EvalContext(prompts=["p0", "p1"]))
    assert s.metrics == {"accuracy": 50.0}
    assert s.details[1] == {"prompt": "p1", "pred": "B", "refr": "C", "is_correct": False}


def test_length_mismatch_and_empty() -> None:
    for cls in (ev.AccEvaluator, ev.EMEvaluator, gsm8k.Gsm8kEvaluator, triviaqa.TriviaQAEvaluator, ev.BleuEvaluator):
        with pytest.raises(EvaluationError, match="2 predictions but 1 references"):
            cls().score(["a", "b"], ["a"])
    assert gsm8k.Gsm8kEvaluator().score([], []).metrics == {"accuracy": 0.0}


def test_gsm8k_numbers() -> None:
    s = gsm8k.Gsm8kEvaluator().score(["42", "42.0000000001", "NULL", "7"], ["42", "42", "3", "7.5"])
    # '7' vs '7.5': int('7.5') fails -> wrong, as the reference
    assert s.correct == [True, True, False, False] and s.metrics["accuracy"] == 50.0


def test_math_equivalence() -> None:
    m = ev.MATHEvaluator()
    s = m.score(["\\frac12", "0.5", "\\dfrac{3}{4}", "5", "x=3"], ["\\frac{1}{2}", "\\frac{1}{2}", "3/4", "6", "3"])
    assert s.correct == [True, True, True, False, True]
    assert ev.MATHEvaluator(version="v2").score(["10\\%"], ["10"]).correct == [True]
    with pytest.raises(EvaluationError, match="version"):
        ev.MATHEvaluator(version="v3")


def test_em_triviaqa_nq_bbh() -> None:
    em = ev.EMEvaluator().score(["The Paris.", "Rome"], [["Paris"], ["Milan", "milano"]])
    assert em.correct == [True, False] and em.metrics == {"score": 50.0}
    tq = triviaqa.TriviaQAEvaluator().score(["I think the answer is Paris, France\nmore"], [["paris"]])
    assert tq.correct == [True] and tq.metrics == {"score": 100.0}
    nq = natural_questions.NQEvaluator().score(["answer: London"], [["Paris"]])
    assert nq.correct == [False]
    free = bbh.BBHEvaluator().score(["So the answer is **yes**.", "the answer is 1, 2"], ["Yes", "1 2"])
    assert free.correct == [True, False] and free.metrics == {"score": 50.0}
    assert bbh.BBHEvaluatorMCQ().score(["(A)"], ["A"]).correct == [False]


def test_circular() -> None:
    patterns = ["ABCD", "BCDA", "CDAB", "DABC"]
    # question 0: gold A in the original order; right in all four rotations. question 1: right only in ABCD
    golds, preds = [], []
    for q, right in ((0, 4), (1, 1)):
        for k, p in enumerate(patterns):
            gold = "ABCD"[p.index("A")]  # where option A moved to
            golds.append(f"{q}--{gold}--{p}")
            preds.append(gold if k < right else "Z")
    m = ev.CircularEvaluator().score(preds, golds).metrics
    assert m["acc_1"] == 100.0 and m["acc_4"] == pytest.approx(5 / 8 * 100)
    assert m["perf_4"] == 50.0 and m["more_4_1"] == 100.0 and m["prior_-"] == pytest.approx(3 / 8 * 100)
    with pytest.raises(EvaluationError, match="circular"):
        ev.CircularEvaluator().score(["A"], ["A"])


def test_longbench() -> None:
    f1 = longbench.LongBenchF1Evaluator().score(["the cat sat"], [["a cat sat down", "dog"]])
    # tokens: [cat, sat] vs [cat, sat, down]: p=1, r=2/3 -> f1 = 0.8
    assert f1.metrics["score"] == pytest.approx(80.0)
    ret = longbench.LongBenchRetrievalEvaluator().score(["Paragraph 3 and 4"], [["Paragraph 3"]])
    assert ret.metrics["score"] == pytest.approx(50.0)
    cls = longbench.LongBenchClassificationEvaluator().score(["it is yes"], [{"answers": ["yes"], "all_classes": ["yes", "no"]}])
    assert cls.metrics["score"] == 100.0
    code = longbench.LongBenchCodeSimEvaluator().score(["```\nx = 1\n"], [["x = 1"]])
    assert code.metrics["score"] == 100.0
    assert longbench.LongBenchCountEvaluator().score(["3 3 4"], [[3]]).metrics["score"] == pytest.approx(200 / 3)
    with pytest.raises(EvaluationError, match="language"):
        longbench.LongBenchF1Evaluator(language="fr")
    # ROUGE-L of the `rouge` package: LCS(cat sat) = 2 over 3 reference / 3 prediction words -> F = 2/3
    rl = longbench.LongBenchRougeEvaluator().score(["the cat sat", ""], [["a cat sat", "zzz"], ["x"]])
    assert rl.metrics["score"] == pytest.approx(100 * (2 / 3) / 2, abs=1e-4)


def test_rouge_and_bleu_names_and_scale() -> None:
    r = ev.RougeEvaluator().score(["the cat sat on the mat", "hello"], ["the cat sat on the mat", "hello world"])
    assert set(r.metrics) == {"rouge1", "rouge2", "rougeL", "rougeLsum"}
    # per row rouge1 F: 1.0 and 2/3 -> the bootstrap median of the mean lies between them, scaled by 100
    assert 66 < r.metrics["rouge1"] <= 100 and r.correct == [None, None]
    perfect = ev.RougeEvaluator().score(["a b c"], ["a b c"]).metrics
    assert perfect["rougeL"] == pytest.approx(100.0)
    b = ev.BleuEvaluator().score(["the cat is on the mat"], ["the cat is on the mat"])
    assert b.metrics["score"] == pytest.approx(100.0) and b.extra["counts"] == [6, 5, 4, 3]
    assert ev.BleuEvaluator().score(["x y z w"], ["a b c d"]).metrics["score"] < 1


def test_math_verify_symbolic() -> None:
    s = ev.MATHVerifyEvaluator().score(["The answer is $\\boxed{\\frac{2}{4}}$", "\\boxed{3}"], ["\\frac{1}{2}", "4"])
    assert s.correct == [True, False] and s.metrics == {"accuracy": 50.0}


def test_evaluator_kwargs_and_unknown_names() -> None:
    ev_ = build_evaluation({"evaluator": {"type": "MATHEvaluator", "version": "v2",
                                          "pred_postprocessor": {"type": "math_postprocess_v2"}}})
    assert ev_.score(["so \\boxed{5}"], ["5"]).correct == [True]  # the evaluator's own postprocessor runs
    with pytest.raises(EvaluationError, match="takes no argument 'strict'") as ei:
        build_evaluation({"evaluator": {"type": "Gsm8kEvaluator", "strict": True}}, where="datasets[0].eval_cfg")
    assert ei.value.field == "datasets[0].eval_cfg.evaluator.strict"
    with pytest.raises(EvaluationError, match="takes no argument 'versions'"):
        build_evaluation({"evaluator": {"type": "MATHEvaluator", "versions": "v2"}})
    with pytest.raises(EvaluationError, match="unknown evaluator") as ei:
        build_evaluation({"evaluator": {"type": "NoSuchEvaluator"}}, where="datasets[2].eval_cfg")
    assert ei.value.code == "PW600" and ei.value.field == "datasets[2].eval_cfg.evaluator.type"


def test_registry_covers_the_brief() -> None:
    for name in ("AccEvaluator", "AccwithDetailsEvaluator", "EMEvaluator", "MATHEvaluator", "MATHVerifyEvaluator",
                 "Gsm8kEvaluator", "BBHEvaluator", "TriviaQAEvaluator", "NQEvaluator", "RougeEvaluator",
                 "BleuEvaluator", "LongBenchF1Evaluator", "LongBenchRougeEvaluator", "CircularEvaluator",
                 "MBPPEvaluator", "HumanEvalEvaluator", "GenericLLMEvaluator", "CascadeEvaluator"):
        assert name in EVALUATORS


def test_needlebench_and_babilong() -> None:
    o = needlebench.NeedleBenchOriginEvaluator().score(["The key is apple pie", "peach"], ["apple pie*apple", "pear*pear"])
    # row 2: no keyword -> 0.2 * edit similarity of 'peach' to 'pear' (distance 2 of 5 -> 60) = 12
    assert o.metrics["score"] == pytest.approx((100 + 12) / 2)
    assert needlebench.NeedleBenchV2OriginEvaluator().score(["nothing"], ["pear*pear"]).metrics["score"] == 0
    m = needlebench.NeedleBenchMultiEvaluator().score(["Alpha and beta"], ["x*alpha beta gamma"])
    assert m.metrics["score"] == pytest.approx(200 / 3)
    p = needlebench.NeedleBenchParallelEvaluator().score(["a b", "a"], ["a*b#10*50", "a*b#10*50"])
    assert p.metrics == {"Depth10": 100.0, "Depth50": 50.0, "average_score": 75.0}
    b = babilong.BabiLongEvaluator().score(["The hallway. Then kitchen", "kitchen <example> hallway"],
                                     [["hallway"], ["hallway"]])
    assert b.metrics == {"score": 50.0} and b.correct == [True, False]


def test_needlebench_v2_is_picked_by_module() -> None:
    class NeedleBenchOriginEvaluator:  # stands for opencompass.datasets.needlebench_v2.origin's class
        __module__ = "opencompass.datasets.needlebench_v2.origin"

    e = build_evaluation({"evaluator": {"type": NeedleBenchOriginEvaluator}})
    assert type(e.evaluator) is needlebench.NeedleBenchV2OriginEvaluator
    e = build_evaluation({"evaluator": {"type": "NeedleBenchOriginEvaluator"}})
    assert type(e.evaluator) is needlebench.NeedleBenchOriginEvaluator


def test_acc_drop() -> None:
    s = drop.AccDropEvaluator().score(["A", "B", "A", "A"], ["A", "A", "A", "A"])
    assert s.metrics == {"acc_drop": 0.5, "acc_after": 50.0, "acc_before": 100.0}
    with pytest.raises(EvaluationError, match="even"):
        drop.AccDropEvaluator().score(["A"], ["A"])


def test_agieval_and_mrcr() -> None:
    from promptweave.suites.agieval import AGIEvalEvaluator, parse_math_answer

    assert parse_math_answer("so $x = 3$") == "3" and parse_math_answer("The answer is therefore \\boxed{y=2}") == "2"
    assert parse_math_answer("we get 4 and then 5.5 apples") == "5.5"
    s = AGIEvalEvaluator().score(["thus $\\frac12$", "the answer is 7"], ["\\frac{1}{2}", "8"])
    assert s.correct == [True, False] and s.metrics == {"score": 50.0}
    m = mrcr.MRCREvaluator().score(["ab: hello", "zz"], ['{"answer": "ab: hello", "prefix": "ab:"}',
                                                       '{"answer": "ab: x", "prefix": "ab:"}'])
    assert m.metrics["score"] == 50.0 and m.correct == [True, False]


def test_check_eval_cfg_for_lint() -> None:
    from promptweave.errors import CodeExecutionError
    from promptweave.evaluate import check_eval_cfg

    check_eval_cfg({"evaluator": {"type": "Gsm8kEvaluator"}, "pred_postprocessor": {"type": "gsm8k_postprocess"}})
    with pytest.raises(EvaluationError) as ei:
        check_eval_cfg({"pred_postprocessor": {"type": "nope"}}, where="datasets[3].eval_cfg", file="cfg.py")
    assert str(ei.value).startswith("[PW600] cfg.py: datasets[3].eval_cfg.pred_postprocessor.type: unknown")
    with pytest.raises(CodeExecutionError):
        check_eval_cfg({"evaluator": {"type": "HumanEvalEvaluator"}}, file="cfg.py")


def test_long_tail_goes_through_the_reference_registry(monkeypatch) -> None:
    # a double for an installed reference's registry (the real packages cannot import here without their deps)
    class RefEvaluator:
        def __init__(self, bonus=0):
            self.bonus = bonus

        def score(self, predictions, references, test_set):
            ok = [p == r for p, r in zip(predictions, references)]
            return {"score": 100 * sum(ok) / len(ok) + self.bonus, "note": "x",
                    "details": [{"correct": c} for c in ok]}

    from promptweave.compat import bridge

    monkeypatch.setattr(bridge, "reference_class",
                        lambda family, name, origin=None: ("opencompass", RefEvaluator) if name == "RefEvaluator" else None)
    e = build_evaluation({"evaluator": {"type": "RefEvaluator", "bonus": 1}})
    s = e.score(["a", "b"], ["a", "c"], EvalContext(rows=[{}, {}]))
    assert s.metrics == {"score": 51.0} and s.correct == [True, False] and s.extra == {"note": "x"}
    with pytest.raises(EvaluationError, match="bad arguments"):
        build_evaluation({"evaluator": {"type": "RefEvaluator", "nope": 1}})
