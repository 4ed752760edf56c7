"""Postprocessor names used by OpenCompass / AISBench configs -> promptweave's functions.

Ordered as the reference config trees use them (``benchmarks/eval_names.py``). Registry aliases the reference
registers (``first-capital``, ``gsm8k`` ...) are accepted too. Judge-output ("dict") postprocessors such as
``generic_llmjudge_postprocess`` are handled by the judge evaluators, not here.
"""
from __future__ import annotations

from promptweave.compat.suites import Registry

_GENERIC: dict[str, str] = {
    "first_option_postprocess": "promptweave.evaluate.postprocess:first_option_postprocess",
    "first_capital_postprocess": "promptweave.evaluate.postprocess:first_capital_postprocess",
    "math_postprocess_v2": "promptweave.evaluate.postprocess:math_postprocess_v2",
    "match_answer_pattern": "promptweave.evaluate.postprocess:match_answer_pattern",
    "last_option_postprocess": "promptweave.evaluate.postprocess:last_option_postprocess",
    "math_postprocess": "promptweave.evaluate.postprocess:math_postprocess",
    "general_cn_postprocess": "promptweave.evaluate.postprocess:general_cn_postprocess",
    "first_capital_postprocess_multi": "promptweave.evaluate.postprocess:first_capital_postprocess_multi",
    "material_postprocessor": "promptweave.evaluate.postprocess:material_postprocessor",
    "xml_tag_postprocessor": "promptweave.evaluate.postprocess:xml_tag_postprocessor",
    "general_postprocess": "promptweave.evaluate.postprocess:general_postprocess",
    "last_capital_postprocess": "promptweave.evaluate.postprocess:last_capital_postprocess",
    "lsht_postprocess": "promptweave.evaluate.postprocess:first_line_lstrip_postprocess",
    "samsum_postprocess": "promptweave.evaluate.postprocess:first_line_lstrip_postprocess",
    "trec_postprocess": "promptweave.evaluate.postprocess:first_line_lstrip_postprocess",
    "triviaqa_postprocess": "promptweave.evaluate.postprocess:first_line_lstrip_postprocess",
    "first_number_postprocess": "promptweave.evaluate.postprocess:first_number_postprocess",
    "multiple_select_postprocess": "promptweave.evaluate.postprocess:multiple_select_postprocess",
    "think_pred_postprocess": "promptweave.evaluate.postprocess:think_pred_postprocess",
    "extract_non_reasoning_content": "promptweave.evaluate.postprocess:extract_non_reasoning_content",
    # the reference registry's aliases
    "general": "promptweave.evaluate.postprocess:general_postprocess",
    "general_cn": "promptweave.evaluate.postprocess:general_cn_postprocess",
    "first-capital": "promptweave.evaluate.postprocess:first_capital_postprocess",
    "last-capital": "promptweave.evaluate.postprocess:last_capital_postprocess",
    "first-capital-multi": "promptweave.evaluate.postprocess:first_capital_postprocess_multi",
    "multiple-select": "promptweave.evaluate.postprocess:multiple_select_postprocess",
    "specific-xml-tag": "promptweave.evaluate.postprocess:xml_tag_postprocessor",
    "think_pred": "promptweave.evaluate.postprocess:think_pred_postprocess",
    "extract-non-reasoning-content": "promptweave.evaluate.postprocess:extract_non_reasoning_content",
    # promptweave's own
    "strip": "promptweave.evaluate.postprocess:strip_postprocess",
    "strip_postprocess": "promptweave.evaluate.postprocess:strip_postprocess",
    "first_capital": "promptweave.evaluate.postprocess:first_capital_postprocess",
    "first_option": "promptweave.evaluate.postprocess:first_option_postprocess",
    "first_number": "promptweave.evaluate.postprocess:first_number_postprocess",
    "last_number_postprocess": "promptweave.evaluate.postprocess:last_number_postprocess",
    "last_number": "promptweave.evaluate.postprocess:last_number_postprocess",
    "regex_postprocess": "promptweave.evaluate.postprocess:regex_postprocess",
    "regex": "promptweave.evaluate.postprocess:regex_postprocess",
    "first_line_postprocess": "promptweave.evaluate.postprocess:first_line_postprocess",
}

# every name above, then the benchmark suites' own (compat/suites.py), looked up on first use of a name not above
POSTPROCESSORS: Registry = Registry(_GENERIC, "POSTPROCESSORS")
