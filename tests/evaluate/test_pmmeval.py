"""P-MMEval evaluators: (reply, language) pairs, answer phrases per language, hand-worked accuracies."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.compat.evaluators import EVALUATORS
from promptweave.compat.postprocessors import POSTPROCESSORS
from promptweave.errors import EvaluationError
from promptweave.evaluate import EvalContext, build_evaluation
from promptweave.suites import pmmeval as pm


def test_postprocessors_pair_the_reply_with_its_language() -> None:
    built = build_evaluation({"evaluator": {"type": "PMMEvalXNLIEvaluator"},
                              "pred_postprocessor": {"type": "pmmeval_xnli_postprocess", "lang_code": "fr"}})
    assert built.process_prediction("La réponse est B") == ("La réponse est B", "fr")
    assert POSTPROCESSORS["pmmeval_flores_postprocess"]("x", lang_fullname="Thai") == ("x", "Thai")


def test_choice_json_phrase_and_fuzzy_readings() -> None:
    assert pm.extract_choice('blah {"answer": "C"} and {"answer": "B"}', "en") == "B"  # the last JSON answer
    assert pm.extract_choice("Je pense que la réponse est c.", "fr") == "c"
    assert pm.extract_choice("答案是 E", "zh") is None  # not A-D
    assert pm.extract_choice("the answer is", "en") is None  # the phrase is the whole reply
    assert pm.extract_choice("Option C looks right", "en") is None
    assert pm.extract_choice_fuzzy("Option C looks right, not B") == "B"  # A, B, C, D in that order


def test_mhellaswag_index_golds_and_case_insensitive() -> None:
    preds = [("The answer is b", "en"), ('{"answer": "A"}', "en"), ("I pick D", "en"), ("", "en")]
    s = EVALUATORS["PMMEvalMHellaswagEvaluator"]().score(preds, ["1", 0, "2", "0"])
    # b == B (index 1); A == A; fuzzy D != C; empty -> no answer
    assert s.metrics == {"accuracy": 50.0}
    assert s.correct == [True, True, False, False]
    assert s.details[2]["failed"] == 1.0 and s.details[3]["failed_strict"] == 1.0


def test_mlogiqa_falls_back_to_the_reply() -> None:
    s = EVALUATORS["PMMEvalMLogiQAEvaluator"]().score([["Vermutlich C", "en"]], ["2"])  # a list, as read back
    assert s.metrics == {"accuracy": 100.0}


def test_mmmlu_locale_codes_and_letter_golds() -> None:
    preds = [("La réponse est A", "FR-FR"), ("答えは C", "JA-JP"), ("B", "EN-US")]
    s = EVALUATORS["PMMEvalMMMLUEvaluator"]().score(preds, ["A", "D", "B"])
    assert s.metrics == {"accuracy": 66.67}


def test_xnli_knows_indonesian_and_unknown_language_is_typed() -> None:
    s = EVALUATORS["PMMEvalXNLIEvaluator"]().score([("Jawaban adalah B", "id")], ["B"])
    assert s.metrics == {"accuracy": 100.0}
    with pytest.raises(EvaluationError, match="no answer phrase"):
        EVALUATORS["PMMEvalXNLIEvaluator"]().score([("hm", "xx")], ["A"])
    with pytest.raises(EvaluationError, match="pairs"):
        EVALUATORS["PMMEvalXNLIEvaluator"]().score(["bare reply"], ["A"])


def test_mgsm_last_number() -> None:
    preds = ["So 3 + 4 = 7.", "It costs $1,234.", "+5", "no number", "0.50"]
    s = EVALUATORS["PMMEvalMGSMEvaluator"]().score(preds, ["7", "1,234", "5", "1", "0.5"])
    assert [d["extracted"] for d in s.details] == ["7", "1234", "5", None, "0.50"]
    assert s.metrics == {"accuracy": 60.0}


@given(st.integers(min_value=0, max_value=10**9))
def test_mgsm_reads_any_integer_back(n: int) -> None:
    assert pm.last_number(f"The total is {n:,} apples.") == str(n)


def test_flores_best_line_run_and_pooled_bleu() -> None:
    from sacrebleu.metrics import BLEU

    gold = "The cat sat on the mat ."
    reply = "Here is the translation:\nThe cat sat on the mat."
    s = EVALUATORS["PMMEvalFloresEvaluator"]().score([(reply, "French")], [gold])
    # the second line alone matches the gold exactly (13a splits the final '.'), so the best run scores 100
    assert s.metrics == {"BLEU": 100.0}
    two = EVALUATORS["PMMEvalFloresEvaluator"]().score([(reply, "French"), ("", "French")], [gold, gold])
    # pooled statistics: the empty reply adds reference length only -> brevity penalty on the corpus
    ref = BLEU.compute_bleu(correct=[7, 6, 5, 4], total=[7, 6, 5, 4], sys_len=7, ref_len=14)
    assert two.metrics == {"BLEU": round(ref.score, 2)}


def test_flores_tokenises_thai_per_character() -> None:
    assert pm.flores_tokenize("สวัสดี world", "Thai").split()[:2] == ["ส", "ว"]
    assert pm.flores_tokenize("我爱你。", "Chinese") == "我 爱 你 。"


def test_mifeval_strict_and_loose() -> None:
    rows = [
        {"instruction_id_list": ["punctuation:no_comma", "startend:end_checker"],
         "kwargs": [{"end_phrase": None}, {"end_phrase": "Fin."}]},
        {"instruction_id_list": ["length_constraints:number_words"],
         "kwargs": [{"relation": "at least", "num_words": 3}]},
        {"instruction_id_list": ["detectable_format:constrained_response"], "kwargs": [{}]},
        {"instruction_id_list": ["detectable_content:postscript"], "kwargs": [{"postscript_marker": "P.S."}]},
    ]
    preds = [("sans virgule Fin.", "fr"), ("三个字", "zh"), ("My answer is no.", "en"), ("   ", "en")]
    s = EVALUATORS["PMMEvalMIFEvalEvaluator"]().score(preds, [None] * 4, EvalContext(rows=rows))
    # strict: row 1 ok, row 2 ok (3 characters for zh), row 3 ok, row 4 blank reply -> 3 of 4
    assert s.metrics["strict_acc"] == 75.0
    # loose keeps the None end_phrase only if it comes last; here the later 'Fin.' wins, so loose == strict
    assert s.metrics["loose_acc"] == 75.0


def test_mifeval_loose_keeps_none_arguments() -> None:
    rows = [{"instruction_id_list": ["startend:end_checker"],
             "kwargs": [{"end_phrase": "Fin."}, {"end_phrase": None}]}]
    s = EVALUATORS["PMMEvalMIFEvalEvaluator"]().score([("Fin.", "fr")], [None], EvalContext(rows=rows))
    assert s.metrics == {"strict_acc": 100.0, "loose_acc": 0.0}


def test_mifeval_needs_rows_and_known_instructions() -> None:
    mif = EVALUATORS["PMMEvalMIFEvalEvaluator"]()
    with pytest.raises(EvaluationError, match="test rows"):
        mif.score([("x", "en")], [None])
    with pytest.raises(EvaluationError, match="unknown MIFEval instruction"):
        mif.score([("x", "en")], [None], EvalContext(rows=[{"instruction_id_list": ["nope:x"], "kwargs": []}]))
