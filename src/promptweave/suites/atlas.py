"""ATLAS (scientific reasoning, judged by LLMs): the reply's JSON answer block, handed to the judges.

``atlas_pred_postprocess`` returns ``{'extract_error': bool, 'answers': <JSON text>}``: the text after the last
closing think tag, then the first fenced ```json block, else the first fenced block, else everything from the
first ``"answers"`` key on (re-opened as an object). Lone backslashes that JSON would reject (LaTeX such as
``\\frac``) are doubled. Nothing found: ``extract_error`` and an empty answer list, as the reference.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_LONE_BACKSLASH = re.compile(r'(?<!\\)\\(?![\\/"bfnrtu])')
_EMPTY = '{"answers": []}'


def fix_json_slash(text: str) -> str:
    return _LONE_BACKSLASH.sub(r"\\\\", text)


def atlas_pred_postprocess(prediction: Any, think_tags: Sequence[str] = ("<think>", "</think>")) -> dict:
    text = "" if prediction is None else str(prediction)
    if len(think_tags) > 1 and think_tags[1] in text:
        text = text.split(think_tags[1])[-1]
    block = re.search(r"```json\n(.*?)\n```", text, re.DOTALL) or re.search(r"```(.*?)```", text, re.DOTALL)
    if block is not None:
        return {"extract_error": False, "answers": fix_json_slash(block.group(1).strip())}
    if '"answers":' in text:
        return {"extract_error": False, "answers": fix_json_slash('{\n"answers"' + text.split('"answers"')[-1])}
    return {"extract_error": True, "answers": _EMPTY}


# the suite's entries in the compat registries (compat/suites.py)
POSTPROCESSORS = {"atlas_pred_postprocess": atlas_pred_postprocess}
