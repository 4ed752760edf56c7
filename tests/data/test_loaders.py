"""Native loaders read the references' layouts into the same columns, splits and row transformations."""
import inspect
import json
from pathlib import Path

import pytest

from promptweave.compat.loaders import LOADERS
from promptweave.data import load_dataset
from promptweave.data.loaders import NATIVE, LoadContext, check, choose, load
from promptweave.errors import LoaderError, PromptweaveError
from tests.data import layouts
from tests.outcome import value_or_error


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _load(cfg, tmp):
    return load(cfg, base_dir=tmp, file=str(tmp / "eval.py")).splits


def _first(split):
    return split.rows[0]


def test_registry_has_at_least_forty_native_loaders_with_a_context_first():
    assert len(LOADERS) >= 40
    for name, fn in LOADERS.items():
        assert next(iter(inspect.signature(fn).parameters)) == "ctx", name
        assert choose(name).kind == NATIVE


def test_mmlu_csv_layout(cache):
    layouts.mmlu(cache, "anatomy", [["What?", "a", "b", "c", "d", "B"]], dev=[["Dev?", "1", "2", "3", "4", "A"]])
    got = _load({"type": "MMLUDataset", "path": "opencompass/mmlu", "name": "anatomy"}, cache)
    assert set(got) == {"dev", "test"}
    assert _first(got["test"]) == {"input": "What?", "A": "a", "B": "b", "C": "c", "D": "d", "target": "B"}
    assert got["dev"].rows[0]["input"] == "Dev?"
    assert got["test"].where == ["line 1"]


def test_cmmlu_skips_header_and_index(cache):
    layouts.cmmlu(cache, "law", [["Q", "a", "b", "c", "d", "C"]])
    got = _load({"type": "CMMLUDataset", "path": "opencompass/cmmlu", "name": "law"}, cache)
    assert _first(got["test"]) == {"question": "Q", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "C"}


def test_ceval_three_splits_with_defaults(cache):
    layouts.ceval(cache, "physics", [["Q", "a", "b", "c", "d", "A"]])
    got = _load({"type": "CEvalDataset", "path": "opencompass/ceval-exam", "name": "physics"}, cache)
    assert set(got) == {"dev", "val", "test"}
    assert _first(got["val"])["explanation"] == "because"
    assert _first(got["test"])["answer"] == "" and _first(got["test"])["explanation"] == ""


def test_gpqa_rotates_the_correct_answer(cache):
    layouts.gpqa(cache, "gpqa_diamond.csv", [(f"Q{i}", "right", "w1", "w2", "w3") for i in range(4)])
    got = _load({"type": "GPQADataset", "path": "./data/gpqa/", "name": "gpqa_diamond.csv"}, cache)
    answers = [r["answer"] for r in got.rows]
    assert answers == ["D", "C", "B", "A"]  # counter starts at 1: BCDA, CDAB, DABC, ABCD
    for r in got.rows:
        assert r[r["answer"]] == "right"


def test_arc_drops_non_four_choice_questions_and_letters_the_key(cache):
    layouts.arc(cache, "data/ARC/ARC-c/ARC-Challenge-Dev.jsonl",
                [("Q1", ["w", "x", "y", "z"], "C"), ("Q2", ["a", "b", "c"], "A")])
    got = _load({"type": "ARCDataset", "path": "opencompass/ai2_arc-dev", "name": "ARC-c"}, cache)
    assert got.rows == [{"question": "Q1", "answerKey": "C", "textA": "w", "textB": "x", "textC": "y",
                         "textD": "z"}]


def test_arc_aisbench_folder_layout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for split in ("Dev", "Test"):
        layouts.arc(tmp_path, f"ais_bench/datasets/ARC-c/ARC-c-{split}.jsonl", [("Q", list("1234"), "D")])
    got = _load({"type": "ARCDataset", "path": "ais_bench/datasets/ARC-c", "name": "ARC-c"}, tmp_path)
    assert set(got) == {"Dev", "Test"} and got["Test"].rows[0]["answerKey"] == "D"


def test_race_splits_and_options(cache):
    layouts.race(cache, "high", [("Art", "Q", ["a", "b", "c", "d"], "B")])
    got = _load({"type": "RaceDataset", "path": "opencompass/race", "name": "high"}, cache)
    assert set(got) == {"validation", "test"}
    assert _first(got["test"]) == {"article": "Art", "question": "Q", "A": "a", "B": "b", "C": "c", "D": "d",
                                   "answer": "B"}


def test_gsm8k_and_bbh_and_math(cache):
    layouts.gsm8k(cache, [("q", "a #### 3")])
    got = _load({"type": "GSM8KDataset", "path": "opencompass/gsm8k"}, cache)
    assert _first(got["test"]) == {"question": "q", "answer": "a #### 3"}
    layouts.bbh(cache, "navigate", [("go?", "Yes")])
    got = _load({"type": "BBHDataset", "path": "opencompass/bbh", "name": "navigate"}, cache)
    assert got.rows == [{"input": "go?", "target": "Yes"}]
    layouts.math(cache, [("1+1", "so $\\boxed{\\frac{1}{2}}$ and \\boxed{2}"), ("none", "no box")])
    got = _load({"type": "MATHDataset", "path": "opencompass/math", "file_name": "math.json"}, cache)
    assert [r["solution"] for r in got["test"].rows] == ["2", None]
    assert got["train"].rows == got["test"].rows and set(got["test"].rows[0]) == {"problem", "solution"}


def test_hellaswag_variants(cache):
    layouts.hellaswag(cache, [("Dom: Ctx: the text", ["a", "b", "c", "d"], 2)])
    v1 = _load({"type": "HellaswagDataset", "path": "opencompass/hellaswag"}, cache)
    v2 = _load({"type": "HellaswagDataset_V2", "path": "opencompass/hellaswag"}, cache)
    assert v1.rows[0]["ctx"] == "the text" and v1.rows[0]["label"] == 2
    assert v2.rows[0]["ctx"] == "Ctx: the text" and v2.rows[0]["label"] == "C"


def test_mathbench_circular_rows(cache):
    layouts.plain_jsonl(cache, "mb/college/single_choice_en.jsonl",
                        [{"question": " Q ", "options": ["w", "x", "y", "z"], "answer": "B"}])
    got = _load({"type": "MathBenchDataset", "path": "mb/college", "name": "single_choice_en"}, cache)
    assert [r["answer"] for r in got.rows] == ["0--B--ABCD", "0--A--BCDA", "0--D--CDAB", "0--C--DABC"]
    assert got.rows[1]["question"] == "Q\nA. x\nB. y\nC. z\nD. w\n"


def test_humaneval_repeats_and_mbpp_splits(cache):
    layouts.plain_jsonl(cache, "data/humaneval/human-eval-v2-20210705.jsonl",
                        [{"task_id": "HumanEval/0", "prompt": "def f():"}])
    got = _load({"type": "HumanevalDataset", "path": "opencompass/humaneval", "num_repeats": 2}, cache)
    assert [r["task_id"] for r in got.rows] == ["HumanEval/0", "HumanEval/0"]
    layouts.plain_jsonl(cache, "data/mbpp/sanitized-mbpp.jsonl",
                        [{"task_id": i, "prompt": f"p{i}", "test_list": [f"assert f({i})", "assert g"]}
                         for i in range(9)])
    got = _load({"type": "SanitizedMBPPDataset", "path": "opencompass/sanitized_mbpp"}, cache)
    assert len(got["train"].rows) == 7 and len(got["test"].rows) == 2
    row = got["test"].rows[0]
    assert row["text"] == "p7" and "prompt" not in row
    assert row["test_list"] == "assert f(7)\nassert g" == row["test_column"]["test_list_2"]


def test_open_qa_tsv_answers_are_literals_never_code(cache):
    d = cache / "data" / "nq"
    d.mkdir(parents=True)
    (d / "nq-dev.qa.csv").write_text("who?\t['Ann', 'Bo']\n", encoding="utf-8")
    (d / "nq-test.qa.csv").write_text("what?\t['X']\n", encoding="utf-8")
    got = _load({"type": "NaturalQuestionDataset", "path": "opencompass/natural_question"}, cache)
    assert got["dev"].rows == [{"question": "who?", "answer": "Ann"}]
    assert got["test"].rows == [{"question": "what?", "answer": ["X"]}]
    (d / "nq-test.qa.csv").write_text("what?\t__import__('os').getcwd()\n", encoding="utf-8")
    with pytest.raises(PromptweaveError, match="Python literal"):
        _load({"type": "NaturalQuestionDataset", "path": "opencompass/natural_question"}, cache)


def test_custom_dataset_jsonl_and_csv_with_bom(cache):
    (cache / "my.csv").write_bytes("\ufeffq,a\nhello,1\n".encode("utf-8"))
    got = _load({"type": "CustomDataset", "path": str(cache / "my.csv")}, cache)
    assert got.rows == [{"q": "hello", "a": "1"}]


def test_relabelling_loaders(cache):
    layouts.plain_jsonl(cache, "data/SuperGLUE/BoolQ/val.jsonl", [{"question": "q", "label": "false"}])
    got = _load({"type": "BoolQDatasetV2", "path": "opencompass/boolq"}, cache)
    assert got.rows[0]["label"] == "B"
    layouts.plain_jsonl(cache, "c.jsonl", [{"label": "-"}, {"label": "neutral"}])
    got = _load({"type": "CMNLIDatasetV2", "path": str(cache / "c.jsonl")}, cache)
    assert got.rows == [{"label": "C"}]


def test_n_repeats_every_split(cache):
    layouts.gsm8k(cache, [("q", "#### 1")])
    got = load_dataset({"type": "GSM8KDataset", "path": "opencompass/gsm8k", "n": 3,
                        "reader_cfg": {"input_columns": ["question"], "output_column": "answer"}}, base_dir=cache)
    assert len(got.test) == 3


def test_unknown_kwarg_is_a_typed_error_naming_the_field(cache):
    with pytest.raises(LoaderError) as err:
        check({"type": "GSM8KDataset", "path": "opencompass/gsm8k", "nmae": "x"}, file="eval.py")
    assert err.value.code == "PW220" and err.value.field == "nmae" and "eval.py" in str(err.value)
    with pytest.raises(LoaderError) as err:
        check({"type": "MMLUDataset", "path": "opencompass/mmlu"}, file="eval.py")
    assert err.value.field == "name"


def test_unknown_loader_class_without_a_reference_is_pw220(monkeypatch):
    from promptweave.compat import bridge

    monkeypatch.setattr(bridge, "reference_class", lambda family, name: None)
    with pytest.raises(LoaderError) as err:
        check({"type": "NoSuchDataset", "path": "x"}, file="cfg.py")
    assert "NoSuchDataset" in str(err.value) and err.value.field == "type"


def test_bridge_is_used_for_the_long_tail_and_said_so(tmp_path, monkeypatch):
    """A double for an installed reference's registry (the real packages' dependencies are absent here)."""
    from promptweave.compat import bridge

    data = tmp_path / "rows.jsonl"
    data.write_text('{"q": "hi", "a": "x"}\n', encoding="utf-8")
    seen = {}

    class FakeHF(list):  # a datasets.Dataset double: rows through to_list()
        def to_list(self):
            return list(self)

    class FakeRefDataset:  # stands in for a reference loader class
        @staticmethod
        def load(path, flavour):
            seen["path"], seen["flavour"] = path, flavour
            return FakeHF(json.loads(line) for line in Path(path).read_text().splitlines())

    monkeypatch.setattr(bridge, "reference_class",
                        lambda family, name: ("opencompass", FakeRefDataset) if name == "LongTailDataset" else None)
    got = load_dataset({"type": "LongTailDataset", "path": str(data), "flavour": "v2",
                        "reader_cfg": {"input_columns": ["q"], "output_column": "a"}}, base_dir=tmp_path)
    assert got.loader == "LongTailDataset (reference bridge: opencompass)"
    assert got.test == [{"q": "hi", "a": "x"}] and seen == {"path": str(data), "flavour": "v2"}


def test_missing_member_file_names_the_layout(cache):
    (cache / "data" / "mmlu").mkdir(parents=True)
    with pytest.raises(LoaderError) as err:
        _load({"type": "MMLUDataset", "path": "opencompass/mmlu", "name": "anatomy", "abbr": "lukaemia"}, cache)
    assert "dev/anatomy_dev.csv" in str(err.value) and "'lukaemia'" in str(err.value)


def test_context_finds_ids(cache):
    layouts.gsm8k(cache, [("q", "a")])
    assert LoadContext("X", file="f.py").find("opencompass/gsm8k") == cache / "data" / "gsm8k"


def test_chembench_json_layout(cache):
    for split in ("dev", "test"):
        p = cache / "data" / "ChemBench" / split / "Name_Conversion_benchmark.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps([{"question": "Q", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "D"}]))
    got = _load({"type": "ChemBenchDataset", "path": "opencompass/ChemBench", "name": "Name_Conversion"}, cache)
    assert got["test"].rows == [{"input": "Q", "A": "a", "B": "b", "C": "c", "D": "d", "target": "D"}]


def test_lc_difficulty_filter_and_split(cache):
    layouts.plain_jsonl(cache, "lc.jsonl", [{"Contest id": i, "test_list": [f"t{i}"], "Difficulty": d}
                                            for i, d in enumerate("EEEEEEHE")])
    got = _load({"type": "LCDataset", "path": str(cache / "lc.jsonl"), "difficulty": "E"}, cache)
    assert [r["Contest id"] for r in got["train"].rows] == [0, 1, 2, 3, 4]
    assert [r["Contest id"] for r in got["test"].rows] == [5, 7]
    assert got["test"].rows[0]["test_column"] == {"test_list_2": "t5", "task_id": 5}


def test_hf_dataset_json_builder_over_local_files_and_cluewsc(cache):
    layouts.plain_jsonl(cache, "data/FewCLUE/cluewsc/dev_few_all.json",
                        [{"text": "小明说他饿了", "label": "true",
                          "target": {"span1_text": "小明", "span2_text": "他", "span2_index": 3}}])
    cfg = {"type": "CluewscDataset", "path": "json", "data_files": "./data/FewCLUE/cluewsc/dev_few_all.json",
           "split": "train"}
    got = _load(cfg, cache)
    assert got.rows[0]["new_text"] == "小明说小明饿了" and got.rows[0]["answer"] == 1
    assert got.rows[0]["span1"] == "小明" and "target" not in got.rows[0]
    plain = _load({**cfg, "type": "HFDataset"}, cache)
    assert plain.rows[0]["target"]["span2_index"] == 3


def test_fofo_judge_fields(cache):
    p = cache / "data" / "subjective" / "fofo" / "fofo_test_prompts_cn.json"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps([{"instruction": "写", "id": 1, "domain": "d", "sub_domain": "s", "format": "f",
                              "format_type": "t"}]), encoding="utf-8")
    got = _load({"type": "FofoDataset", "path": "./data/subjective/fofo", "name": "fofo_test_prompts_cn"}, cache)
    assert got.rows[0]["question"] == "写" and got.rows[0]["judge"]["lan"] == "cn"


def test_siqa_v2_and_piqa_v2_label_files(cache):
    d = cache / "data" / "siqa"
    d.mkdir(parents=True)
    for stem in ("train", "dev"):
        (d / f"{stem}.jsonl").write_text(json.dumps({"context": "c", "question": "q", "answerA": "a",
                                                     "answerB": "b", "answerC": "c"}) + "\n", encoding="utf-8")
        (d / f"{stem}-labels.lst").write_text("2\n", encoding="utf-8")
    v1 = _load({"type": "siqaDataset", "path": "opencompass/siqa"}, cache)
    v2 = _load({"type": "siqaDataset_V2", "path": "opencompass/siqa"}, cache)
    assert v1["validation"].rows[0]["label"] == 2
    assert v2["validation"].rows[0]["label"] == "B"
    assert v2["validation"].rows[0]["all_labels"]["candidates"][1] == ["B. b", "B", "b"]
    assert v2["validation"].rows[0]["all_labels"]["label"] == 1


def test_a_reference_loader_whose_package_is_unusable_says_so(monkeypatch):
    import importlib.util

    from promptweave.compat import bridge

    if importlib.util.find_spec("opencompass") is None:
        pytest.skip("opencompass is not installed")
    monkeypatch.setattr(bridge, "reference_class", lambda family, name: None)  # as here: its deps are missing
    with pytest.raises(LoaderError) as err:
        check({"type": "NeedleBenchMultiDataset", "path": "x"}, file="cfg.py")
    assert "the installed opencompass registers it" in str(err.value) and "cfg.py" in str(err.value)


def test_any_loader_argument_values_give_rows_or_a_typed_error(cache):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st


    layouts.mmlu(cache, "anatomy", [["Q", "a", "b", "c", "d", "A"]])
    values = st.one_of(st.text(max_size=20), st.integers(), st.none(), st.booleans(),
                       st.lists(st.text(max_size=5), max_size=2), st.sampled_from(["anatomy", "opencompass/mmlu"]))

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(loader=st.sampled_from(sorted(LOADERS)), path=values, name=values)
    def probe(loader, path, name):
        _, exc = value_or_error(_load, {"type": loader, "path": path, "name": name}, cache)
        assert exc is None or exc.code.startswith("PW2")

    probe()


def test_obqa_wsc_bbeh_matbench_simpleqa(cache):
    layouts.plain_jsonl(cache, "obqa.jsonl", [{"question": {"stem": "S", "choices": [{"text": t} for t in "wxyz"]},
                                               "answerKey": "B", "fact1": "F"}])
    got = _load({"type": "OBQADataset", "path": str(cache / "obqa.jsonl")}, cache)
    assert got.rows == [{"A": "w", "B": "x", "C": "y", "D": "z", "question_stem": "S", "answerKey": "B",
                         "fact1": "F"}]
    layouts.plain_jsonl(cache, "wsc.jsonl", [{"target": {"span1_text": "Al", "span2_text": "he"}, "text": "t",
                                              "label": "false"}])
    got = _load({"type": "WSCDatasetV2", "path": str(cache / "wsc.jsonl")}, cache)
    assert got.rows == [{"span1": "Al", "span2": "he", "text": "t", "label": "B"}]
    p = cache / "bbeh" / "boardgame" / "task.json"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps({"examples": [{"input": "i", "target": "t"}]}))
    assert _load({"type": "BBEHDataset", "path": str(cache / "bbeh"), "name": "boardgame"}, cache).rows == [
        {"input": "i", "target": "t"}]
    p = cache / "mb" / "matbench_base_fold_0_gap_test.json"
    p.parent.mkdir()
    p.write_text(json.dumps([{"problem": "p", "answer": 1.5, "other": 0}]))
    assert _load({"type": "MatbenchDataset", "path": str(cache / "mb"), "task": "gap"}, cache).rows == [
        {"problem": "p", "answer": 1.5}]
    (cache / "sq.csv").write_text("problem,answer\nwho?,Ann\nwhat?,Bo\nwhere?,Cy\n", encoding="utf-8")
    got = _load({"type": "SimpleQADataset", "path": str(cache / "sq.csv"), "num_examples": 2}, cache)
    import random

    expected = random.Random(0).sample(["who?", "what?", "where?"], 2)
    assert [r["problem"] for r in got["test"].rows] == expected and got["train"].rows == got["test"].rows


def test_winogrande_c3_record(cache):
    layouts.plain_jsonl(cache, "data/winogrande/dev.jsonl",
                        [{"sentence": "Al hid _ coat.", "option1": "his", "option2": "her", "answer": "2"}])
    v1 = _load({"type": "WinograndeDataset", "path": "./data/winogrande"}, cache)
    v2 = _load({"type": "WinograndeDatasetV2", "path": "./data/winogrande"}, cache)
    assert v1.rows[0] == {"prompt": "Al hid _ coat.", "only_option1": "his", "only_option2": "her",
                          "opt1": "Al hid his coat.", "opt2": "Al hid her coat.", "answer": "2", "cont": " coat."}
    assert v2.rows[0]["answer"] == "B"
    (cache / "c3.json").write_text(json.dumps([[["p1", "p2"], [{"question": "Q", "choice": ["x", "y"],
                                                                "answer": "y"}]]]), encoding="utf-8")
    got = _load({"type": "C3Dataset", "path": str(cache / "c3.json")}, cache)
    assert got.rows[0]["choices"] == ["x", "y", "x", "x"] and got.rows[0]["label"] == 1
    assert got.rows[0]["content"] == "p1 p2"
    layouts.plain_jsonl(cache, "rec.jsonl", [{"passage": {"text": "A @highlight B"},
                                              "qas": [{"query": "@placeholder won", "answers": [{"text": "A"}]}]}])
    got = _load({"type": "ReCoRDDataset", "path": str(cache / "rec.jsonl")}, cache)
    assert got.rows == [{"text": "A  B", "question": "____ won", "answers": ["A"]}]


def test_mmlu_pro_parquet_folder(cache):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    d = cache / "data" / "mmlu_pro" / "data"
    d.mkdir(parents=True)
    items = [{"question_id": i, "question": f"q{i}", "options": ["a", "b", "N/A", "c"], "answer": "D" if i else "A",
              "category": "math" if i < 2 else "law"} for i in range(3)]
    pq.write_table(pa.Table.from_pylist(items), d / "test-00000-of-00001.parquet")
    pq.write_table(pa.Table.from_pylist(items[:1]), d / "validation-00000-of-00001.parquet")
    got = _load({"type": "MMLUProDataset", "path": "opencompass/mmlu_pro", "category": "math"}, cache)
    assert [r["question"] for r in got["test"].rows] == ["q0", "q1"]
    assert got["test"].rows[1]["options_str"] == "A. a\nB. b\nD. c"  # N/A skipped, letters keep their places
    assert got["test"].rows[1]["answer_string"] == "D. c\n"
