"""The long-context families' native loaders and rules (L-Eval, InfiniteBench, LV-Eval, BABILong): where they look
for data, what a record the reference cannot read gives, and the parsers' properties."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptweave.data.loaders.base import LoadContext
from promptweave.errors import DataNotFoundError, LoaderError, ReferenceTextMissingError
from promptweave.suites import babilong, infinitebench, leval, lveval


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _jsonl(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


DOC = {"input": "doc", "instructions": ["q1", "q2", "extra question"], "outputs": ["one two", "three"]}


def test_leval_reads_the_repository_layout_and_pairs_questions_with_answers(cache):
    _jsonl(cache / "L4NLP" / "LEval" / "LEval" / "Generation" / "news_summ.jsonl", [DOC])
    got = leval.leval(LoadContext("LEvalNewsSummDataset"), "L4NLP/LEval", "news_summ")["test"]
    assert got.rows == [{"question": "q1", "context": "doc", "length": 2, "answer": "one two"},
                        {"question": "q2", "context": "doc", "length": 1, "answer": "three"}]
    assert got.where == ["line 1.instructions[0]", "line 1.instructions[1]"]


def test_leval_exam_rows_have_no_length_and_a_file_path_is_read_as_the_task(cache):
    f = _jsonl(cache / "ais_bench" / "datasets" / "LEval" / "LEval" / "Exam" / "tpo.jsonl", [DOC])
    got = leval.leval(LoadContext("LEvalTPODataset"), str(f), "tpo")["test"]
    assert got.rows[0] == {"question": "q1", "context": "doc", "answer": "one two"}


def test_leval_a_missing_task_names_the_places_tried(cache):
    (cache / "L4NLP" / "LEval").mkdir(parents=True)
    with pytest.raises(LoaderError) as ei:
        leval.leval(LoadContext("LEvalTPODataset"), "L4NLP/LEval", "tpo")
    assert "LEval/Exam/tpo.jsonl" in str(ei.value) and ei.value.field == "name"


def test_leval_no_folder_and_no_hub_cache_is_data_not_found(cache, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(cache / "hf"))
    with pytest.raises(DataNotFoundError) as ei:
        leval.leval(LoadContext("LEvalTPODataset"), "L4NLP/LEval", "tpo")
    assert "LEval/Exam/<name>.jsonl" in str(ei.value)


def test_leval_record_without_lists_is_a_layout_error(cache):
    _jsonl(cache / "L4NLP" / "LEval" / "LEval" / "Exam" / "tpo.jsonl", [{**DOC, "outputs": "A"}])
    with pytest.raises(LoaderError) as ei:
        leval.leval(LoadContext("LEvalTPODataset"), "L4NLP/LEval", "tpo")
    assert ei.value.field == "line 1"


@pytest.mark.parametrize("name", ["../x", "", "a/b", ".hidden"])
def test_leval_subset_names_cannot_leave_the_folder(cache, name):
    (cache / "L4NLP" / "LEval").mkdir(parents=True)
    with pytest.raises(LoaderError):
        leval.leval(LoadContext("LEvalTPODataset"), "L4NLP/LEval", name)


@given(st.text(alphabet=st.sampled_from(list("The answer is 12,3.4x ²\n"))) | st.text())
def test_gsm100_postprocess_keeps_the_digits_of_one_word(text):
    out = leval.gsm100_postprocess(text)
    assert all(c.isdigit() for c in out)
    if "The answer is" not in text:
        assert out == ""
    elif out:  # the digits of one space-separated word after the phrase
        words = text.split("The answer is")[1].split(" ")
        assert any("".join(c for c in w if c.isdigit()) == out for w in words)


def test_lveval_keyword_tasks_append_the_keywords_as_the_last_answer(cache):
    _jsonl(cache / "Infinigence" / "LVEval" / "lic_mixup" / "lic_mixup_32k.jsonl",
           [{"input": "q", "context": "c", "answers": ["a"], "confusing_facts": ["f"], "answer_keywords": "k"}])
    got = lveval.lveval(LoadContext("LVEvallicDataset"), "Infinigence/LVEval", "lic_mixup_32k")["test"]
    assert got.rows == [{"input": "q", "context": "c", "answers": ["a", "k"], "confusing_facts": ["f"],
                         "answer_keywords": "k"}]
    _jsonl(cache / "Infinigence" / "LVEval" / "dureader_mixup" / "dureader_mixup_16k.jsonl",
           [{"input": "q", "context": "c", "answers": ["a"], "answer_keywords": "ignored"}])
    got = lveval.lveval(LoadContext("LVEvaldureaderDataset"), "Infinigence/LVEval", "dureader_mixup_16k")["test"]
    assert got.rows == [{"input": "q", "context": "c", "answers": ["a"]}]


def test_lveval_opt_f1_english_keyword_gate():
    ev = lveval.LVEvalOPTF1Evaluator(language="en")
    # the keyword "Paris" is missing: no credit whatever the F1 would be
    assert ev.score(["the capital city"], [["the capital city", "Paris"]]).metrics == {"LVEval_f1": 0.0}
    # stop words do not count toward the keyword recall ("of" is blacklisted): 1 of 2 keyword tokens found
    assert ev.score(["Paris"], [["Paris", "of Paris"]]).metrics == {"LVEval_f1": 100.0}
    assert ev.score(["of"], [["of", "of Paris"]]).metrics == {"LVEval_f1": 0.0}


def test_lveval_unknown_language_is_refused():
    from promptweave.errors import EvaluationError

    with pytest.raises(EvaluationError):
        lveval.LVEvalF1Evaluator(language="fr")


def test_infinitebench_mathcalc_and_endia_rules():
    mc = infinitebench.InfiniteBenchmathcalcEvaluator()
    assert mc.score(["1, 2, 4", "x"], [[1, 2, 3], [5]]).metrics == {"score": 100.0}  # (2 + 0) / 2 rows
    endia = infinitebench.InfiniteBenchendiaEvaluator()
    assert endia.score(["'alice' said", "Bob"], [["ALICE"], ["CAROL"]]).metrics == {"score": 50.0}


def test_infinitebench_coderun_without_a_call_names_the_record(cache):
    f = _jsonl(cache / "data" / "InfiniteBench" / "code_run.jsonl",
               [{"context": "c", "input": "call func_1(2)", "answer": 3}, {"context": "c", "input": "no call",
                                                                            "answer": 1}])
    with pytest.raises(LoaderError) as ei:
        infinitebench.coderun(LoadContext("InfiniteBenchcoderunDataset"), "./data/InfiniteBench/code_run.jsonl")
    assert ei.value.field == "line 2.input" and ei.value.file == str(f)


def test_babilong_bad_task_and_missing_texts(cache, monkeypatch):
    ctx = LoadContext("BabiLongDataset")
    with pytest.raises(LoaderError):
        babilong.babilong(ctx, "opencompass/babilong", "qa11", "0k")
    with pytest.raises(LoaderError):
        babilong.babilong(ctx, "opencompass/babilong", "qa1", "3k")
    f = cache / "data" / "babilong" / "data" / "qa1" / "0k.json"
    f.parent.mkdir(parents=True)
    f.write_text("[]", encoding="utf-8")
    monkeypatch.setenv("PROMPTWEAVE_NO_REFERENCE", "1")
    with pytest.raises(ReferenceTextMissingError):
        babilong.babilong(ctx, "opencompass/babilong", "qa1", "0k")


def test_babilong_template_reader_evaluates_only_plain_fstrings(tmp_path):
    src = tmp_path / "prompts.py"
    src.write_text("A = 'x'\nB = f'{A}-{A}'\nC = f'{A!r}'\nD = f'{open(1)}'\nE = {'k': 'v' 'w'}\n", encoding="utf-8")
    got = babilong._texts_from(str(src))
    assert got == {"A": "x", "B": "x-x", "E": {"k": "vw"}}
