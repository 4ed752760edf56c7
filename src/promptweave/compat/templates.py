"""Reference prompt template classes whose prompt is written by code from plain row data -> promptweave's classes.

A dataset's ``prompt_template=dict(type='OlympiadBenchTemplate')`` names a class the reference defines in a dataset
module (registered in its ``ICL_PROMPT_TEMPLATES``); the ones here compute the same text natively (each a
``prompt.row_template.RowTemplate``, in its benchmark's suite), named by module path and imported when a config
uses one. Any other unknown template type is a typed "not supported" error.
"""
from __future__ import annotations

ROW_TEMPLATES: dict[str, str] = {
    "OlympiadBenchTemplate": "promptweave.suites.olympiadbench.template:OlympiadBenchTemplate",
    "OlympiadBenchRawTemplate": "promptweave.suites.olympiadbench.template:OlympiadBenchRawTemplate",
}
