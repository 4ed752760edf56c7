"""Postprocessor names used by OpenCompass / AISBench configs -> promptweave's functions.

Ordered as the reference config trees use them (``benchmarks/eval_names.py``). Registry aliases the reference
registers (``first-capital``, ``gsm8k`` ...) are accepted too. Judge-output ("dict") postprocessors such as
``generic_llmjudge_postprocess`` are handled by the judge evaluators, not here.
"""
from __future__ import annotations

from collections.abc import Callable

from promptweave.compat.suites import Registry
from promptweave.evaluate import postprocess as pp
from promptweave.evaluate.open_qa_match import strategyqa_dataset_postprocess, strategyqa_pred_postprocess

_GENERIC: dict[str, Callable] = {
    "first_option_postprocess": pp.first_option_postprocess,
    "first_capital_postprocess": pp.first_capital_postprocess,
    "math_postprocess_v2": pp.math_postprocess_v2,
    "match_answer_pattern": pp.match_answer_pattern,
    "last_option_postprocess": pp.last_option_postprocess,
    "math_postprocess": pp.math_postprocess,
    "general_cn_postprocess": pp.general_cn_postprocess,
    "first_capital_postprocess_multi": pp.first_capital_postprocess_multi,
    "material_postprocessor": pp.material_postprocessor,
    "xml_tag_postprocessor": pp.xml_tag_postprocessor,
    "teval_postprocess": pp.teval_postprocess,
    "general_postprocess": pp.general_postprocess,
    "mathbench_postprocess": pp.mathbench_postprocess,
    "last_capital_postprocess": pp.last_capital_postprocess,
    "TheoremQA_postprocess": pp.theoremqa_postprocess,
    "lsht_postprocess": pp.first_line_lstrip_postprocess,
    "samsum_postprocess": pp.first_line_lstrip_postprocess,
    "trec_postprocess": pp.first_line_lstrip_postprocess,
    "triviaqa_postprocess": pp.first_line_lstrip_postprocess,
    "mgsm_postprocess": pp.mgsm_postprocess,
    "first_number_postprocess": pp.first_number_postprocess,
    "multiple_select_postprocess": pp.multiple_select_postprocess,
    "think_pred_postprocess": pp.think_pred_postprocess,
    "extract_non_reasoning_content": pp.extract_non_reasoning_content,
    "strategyqa_pred_postprocess": strategyqa_pred_postprocess,
    "strategyqa_dataset_postprocess": strategyqa_dataset_postprocess,
    "strategyqa": strategyqa_pred_postprocess,
    "strategyqa_dataset": strategyqa_dataset_postprocess,
    # the reference registry's aliases
    "general": pp.general_postprocess,
    "general_cn": pp.general_cn_postprocess,
    "first-capital": pp.first_capital_postprocess,
    "last-capital": pp.last_capital_postprocess,
    "first-capital-multi": pp.first_capital_postprocess_multi,
    "multiple-select": pp.multiple_select_postprocess,
    "specific-xml-tag": pp.xml_tag_postprocessor,
    "think_pred": pp.think_pred_postprocess,
    "extract-non-reasoning-content": pp.extract_non_reasoning_content,
    # promptweave's own
    "strip": pp.strip_postprocess,
    "strip_postprocess": pp.strip_postprocess,
    "first_capital": pp.first_capital_postprocess,
    "first_option": pp.first_option_postprocess,
    "first_number": pp.first_number_postprocess,
    "last_number_postprocess": pp.last_number_postprocess,
    "last_number": pp.last_number_postprocess,
    "regex_postprocess": pp.regex_postprocess,
    "regex": pp.regex_postprocess,
    "first_line_postprocess": pp.first_line_postprocess,
}

# every name above, then the benchmark suites' own (compat/suites.py), looked up on first use of a name not above
POSTPROCESSORS: Registry = Registry(_GENERIC, "POSTPROCESSORS")
