"""LawBench task rules against hand-worked scores (metrics ×100, the reference's names)."""
from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.compat.evaluators import EVALUATORS
from promptweave.errors import EvaluationError, MissingExtraError, PromptweaveWarning
from promptweave.evaluate import EvalContext, build_evaluation, prepare_tasks
from promptweave.extras import installed
from promptweave.suites import lawbench as lb


def score(index: str, preds: list[str], golds: list[str]) -> dict:
    return EVALUATORS["LawBenchEvaluator_" + index.replace("-", "_")]().score(preds, golds, EvalContext()).metrics


def test_option_tasks_need_the_gold_option_alone() -> None:
    preds = ["答案是B", "B或C", "我不知道", "b"]  # right; two options; none (abstains); lower case is not an option
    golds = ["正确答案：B"] * 4
    assert score("1-2", preds, golds) == {"score": 25.0, "abstention_rate": 50.0}
    assert score("3-6", ["选 D"], ["正确答案:D"]) == {"score": 100.0, "abstention_rate": 0.0}
    assert score("2-8", ["E"], ["[正确答案]E"]) == {"score": 100.0, "abstention_rate": 0.0}
    with pytest.raises(EvaluationError, match="unexpected gold"):
        score("1-2", ["B"], ["答案：B"])


def test_dispute_focus_skips_compensation_rows() -> None:
    preds = ["争议焦点是违约", "利息和本金争议", "x"]
    golds = ["争议焦点类别：违约。", "争议焦点类别：利息。", "争议焦点类别：赔偿。"]
    # the third row is left out of the score but counted in the abstention denominator
    assert score("2-2", preds, golds) == {"score": 50.0, "abstention_rate": 0.0}


def test_label_set_f1() -> None:
    # predicted {准予离婚, 婚后有子女}, gold {准予离婚, 支付抚养费}: P = R = 1/2 -> F1 1/2
    assert score("2-3", ["准予离婚，婚后有子女"], ["类别:准予离婚、支付抚养费。"]) == {"score": 50.0,
                                                                                  "abstention_rate": 0.0}
    assert score("2-9", ["欺骗", "无"], ["欺骗;获利", "卖出"]) == {"score": pytest.approx(100 * (2 / 3) / 2),
                                                                "abstention_rate": 50.0}
    assert score("3-3", ["罪名：盗窃"], ["罪名:盗窃"]) == {"score": 100.0, "abstention_rate": 0.0}


def test_char_f1_reading_and_trigger_words() -> None:
    assert lb.char_f1("张三", "张三。") == 1.0  # punctuation dropped
    assert lb.char_f1("AB", "ab") == 1.0
    assert lb.char_f1("", "") == 1.0 and lb.char_f1("", "x") == 0.0
    assert score("2-5", ["张三李四"], ["回答:张三"]) == {"score": pytest.approx(100 * 2 * 1 * 0.5 / 1.5)}
    # trigger words paired by position: ('偷', '偷') = 1, ('抢', '骗') = 0 -> P = 1/2, R = 1/2 -> F ~ 1/2
    assert score("2-10", ["偷;骗"], ["偷;抢"])["score"] == pytest.approx(50.0, abs=1e-6)


def test_entities() -> None:
    reply = "犯罪嫌疑人：张三\n受害人：无\n地点：北京市朝阳区 某处"
    assert lb._entities_in_reply(reply) == {"犯罪嫌疑人": "张三", "地点": "北京市朝阳区"}
    # gold has 3 types, the reply finds 2 (both right): P = 1, R = 2/3 -> F = 0.8
    m = score("2-6", [reply], ["犯罪嫌疑人:张三;受害人:李四;地点:北京市朝阳区"])
    assert m["score"] == pytest.approx(80.0, abs=1e-6) and m["anstention_rate"] == 0.0
    assert score("2-6", ["nothing"], [""]) == {"score": 100.0, "anstention_rate": 0.0}


def test_articles_read_chinese_numerals() -> None:
    m = score("3-1", ["根据刑法第二百六十四条、第六十七条"], ["法条:刑法第264、67条"])
    assert m == {"score": 100.0, "abstention_rate": 0.0}
    # '第…款' is removed lazily from the first '第', which swallows '第六十七条第三款' whole (as the reference):
    # predicted {264} against {264, 67} -> P = 1, R = 1/2 -> F1 = 2/3
    m = score("3-1", ["根据刑法第二百六十四条、第六十七条第三款"], ["法条:刑法第264、67条"])
    assert m == {"score": pytest.approx(200 / 3), "abstention_rate": 0.0}
    assert score("3-1", ["不清楚"], ["法条:刑法第264条"]) == {"score": 0.0, "abstention_rate": 100.0}


def test_prison_term_log_distance() -> None:
    preds = ["判处有期徒刑一年六个月", "三年", "无法判断", "x"]
    golds = ["刑期:18个月", "刑期:24个月", "刑期:12个月", "刑期:无期徒刑"]
    # a month count wins over years: '1年6个月' reads as 6 months (as the reference); '三年' as 36; the life
    # sentence row is skipped; no term costs log 216
    d = [abs(math.log(19) - math.log(7)), abs(math.log(25) - math.log(37)), math.log(216)]
    expected = (math.log(216) - sum(d) / 3) / math.log(216)
    m = score("3-4", preds, golds)
    assert m["score"] == pytest.approx(100 * expected) and m["abstention_rate"] == pytest.approx(25.0)
    assert score("3-5", ["没有"], ["刑期:6个月"]) == {"score": 0.0, "abstention_rate": 100.0}


def test_damages_amount_among_numbers() -> None:
    m = score("3-7", ["共计1200.0元", "约1000元", "未知"], ["上文涉及到的犯罪金额:1200元。"] * 3)
    assert m == {"score": pytest.approx(100 / 3), "abstention_rate": pytest.approx(100 / 3)}


def test_rouge_l_on_segmented_text() -> None:
    # ASCII words segment as written: LCS('a b c', 'a c') = 2 -> P = 2/3, R = 1 -> F = 0.8; empty reply -> 无内容
    m = score("3-8", ["a b c", ""], ["a c", "a c"])
    assert m["score"] == pytest.approx(100 * 0.8 / 2, abs=1e-4)
    assert score("1-1", ["x y"], ["答案:x y"])["score"] == pytest.approx(100.0, abs=1e-4)


@given(st.lists(st.sampled_from(lb.EVENTS), max_size=4), st.lists(st.sampled_from(lb.EVENTS), min_size=1,
                                                                      max_size=4))
def test_event_f1_matches_set_f1(named: list[str], gold: list[str]) -> None:
    reply = "，".join(named)
    found = {e for e in lb.EVENTS if e in reply}  # an option may sit inside another, as in the reference
    m = lb.events([(reply, ";".join(gold), None)])
    assert m["score"] == pytest.approx(lb.set_f1(found, set(gold)))


def test_grammar_correction_needs_the_reference() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = build_evaluation({"evaluator": {"type": "LawBenchEvaluator_2_1"}})
    # refused where the reference cannot score it: not installed with its dependencies (no native ChERRANT), or
    # installed with them but without ChERRANT's own optional packages (which it would find only after the run)
    if built.evaluator.inner is not None and all(installed(m) for m in ("ltp", "pypinyin")):
        pytest.skip("the reference's ChERRANT can score task 2-1 here (opencompass with ltp and pypinyin)")
    assert any(isinstance(w.message, PromptweaveWarning) and "ChERRANT" in str(w.message) for w in caught)

    class Task:
        evaluation = built

    with pytest.raises(MissingExtraError, match=r"\[PW640\].*ChERRANT"):
        prepare_tasks([Task()])
    with pytest.raises(EvaluationError, match="unknown LawBench task"):
        lb.LawBenchEvaluator(index="9-9")
