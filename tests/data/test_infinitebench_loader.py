"""InfiniteBench code_debug's native loader: columns as the reference makes them, layout errors naming the record."""
from __future__ import annotations

import json

import pytest

from promptweave.data.loaders.base import LoadContext
from promptweave.errors import LoaderError
from promptweave.suites.infinitebench import codedebug

CTX = LoadContext("InfiniteBenchcodedebugDataset")


def _file(tmp_path, *records: dict):
    f = tmp_path / "code_debug.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return f


def test_columns_and_the_answer_letter(tmp_path) -> None:
    f = _file(tmp_path, {"context": "c", "input": "q", "options": ["f", "g", "h", "k"], "answer": ["h"], "id": 3})
    split = codedebug(CTX, str(f))
    assert split.rows == [{"context": "c", "question": "q", "option_A": "f", "option_B": "g", "option_C": "h",
                           "option_D": "k", "answer": "C"}]


@pytest.mark.parametrize("bad,field", [({"answer": ["zz"]}, "line 2.answer"), ({"options": ["f"]}, "line 2.options"),
                                       ({"answer": []}, "line 2.answer")])
def test_a_record_the_reference_cannot_read_is_named(tmp_path, bad: dict, field: str) -> None:
    good = {"context": "c", "input": "q", "options": ["f", "g", "h", "k"], "answer": ["f"]}
    f = _file(tmp_path, good, {**good, **bad})
    with pytest.raises(LoaderError) as ei:
        codedebug(CTX, str(f))
    assert ei.value.field == field and ei.value.file == str(f)
