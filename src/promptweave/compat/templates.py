"""Reference prompt template classes whose prompt is written by code from plain row data -> promptweave's classes.

A dataset's ``prompt_template=dict(type='OlympiadBenchTemplate')`` names a class the reference defines in a dataset
module (registered in its ``ICL_PROMPT_TEMPLATES``); the ones here compute the same text natively
(``prompt/row_template.py``). Any other unknown template type is a typed "not supported" error.
"""
from __future__ import annotations

from promptweave.prompt.olympiad import OlympiadBenchRawTemplate, OlympiadBenchTemplate
from promptweave.prompt.row_template import RowTemplate

ROW_TEMPLATES: dict[str, type[RowTemplate]] = {
    "OlympiadBenchTemplate": OlympiadBenchTemplate,
    "OlympiadBenchRawTemplate": OlympiadBenchRawTemplate,
}
