import csv
import json
import random
from pathlib import Path

import pytest

from promptweave.data import (
    DataError,
    DatasetSplits,
    ReaderConfig,
    load_dataset,
    select_range,
)

READER = {"input_columns": ["question", "context"], "output_column": "answer"}


def rows(n, prefix="r"):
    return [{"answer": f"{prefix}a{i}", "extra": i, "context": f"{prefix}c{i}", "question": f"{prefix}q{i}"}
            for i in range(n)]


def write_jsonl(path: Path, items):
    path.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return path


def test_jsonl_single_file_is_train_and_test_projected_in_reader_order(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", rows(4))
    got = load_dataset({"path": "d.jsonl", "reader_cfg": READER}, base_dir=tmp_path)
    assert isinstance(got, DatasetSplits)
    assert got.same_split
    assert got.train == got.test
    assert list(got.test[0]) == ["question", "context", "answer"]
    assert got.test[2] == {"question": "rq2", "context": "rc2", "answer": "ra2"}
    assert got.input_columns == ["question", "context"] and got.output_column == "answer"
    assert str(tmp_path / "d.jsonl") in got.source


def test_project_false_keeps_all_columns_and_add_meta(tmp_path):
    write_jsonl(tmp_path / "d.jsonl", rows(3))
    got = load_dataset({"path": "d.jsonl", "abbr": "demo", "reader_cfg": {**READER, "test_range": "[1:]"}},
                       base_dir=tmp_path, project=False, add_meta=True)
    assert not got.same_split  # ranges differ, so the test rows are a subset
    assert got.test[0]["extra"] == 1
    assert got.test[0]["subdivision"] == "demo_all" and got.test[0]["idx"] == 1
    assert got.test_index == [1, 2] and got.train_index == [0, 1, 2]


def test_split_folder_csv_and_ranges(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    for name, n in (("train", 10), ("test", 6)):
        with (folder / f"{name}.csv").open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=["question", "context", "answer"])
            w.writeheader()
            for r in rows(n, name):
                w.writerow({k: r[k] for k in ("question", "context", "answer")})
    cfg = {"path": "data", "reader_cfg": {**READER, "train_range": "[2:8:2]", "test_range": "[-2:]"}}
    got = load_dataset(cfg, base_dir=tmp_path)
    assert [r["question"] for r in got.train] == ["trainq2", "trainq4", "trainq6"]
    assert [r["question"] for r in got.test] == ["testq4", "testq5"]
    assert not got.same_split


def test_json_object_of_splits_and_same_split_names(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps({"dev": rows(3, "d"), "val": rows(2, "v")}))
    got = load_dataset({"path": "d.json", "reader_cfg": {**READER, "train_split": "dev", "test_split": "dev"}},
                       base_dir=tmp_path)
    assert got.same_split and len(got.test) == 3
    got = load_dataset({"path": "d.json", "reader_cfg": {**READER, "train_split": "dev", "test_split": "val"}},
                       base_dir=tmp_path)
    assert not got.same_split and got.test[1]["question"] == "vq1"


def test_parquet_and_data_files_dict(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.Table.from_pylist(rows(5, "p")), tmp_path / "train.parquet")
    write_jsonl(tmp_path / "t.jsonl", rows(2, "t"))
    got = load_dataset({"data_files": {"train": "train.parquet", "test": "t.jsonl"}, "reader_cfg": READER},
                       base_dir=tmp_path)
    assert got.train[4] == {"question": "pq4", "context": "pc4", "answer": "pa4"}
    assert len(got.test) == 2


def test_hf_saved_to_disk_and_builder(tmp_path):
    datasets = pytest.importorskip("datasets")
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_list(rows(4, "h")),
                               "test": datasets.Dataset.from_list(rows(2, "x"))})
    dd.save_to_disk(str(tmp_path / "saved"))
    got = load_dataset({"path": "saved", "reader_cfg": READER}, base_dir=tmp_path)
    assert [r["question"] for r in got.train] == ["hq0", "hq1", "hq2", "hq3"]
    assert got.test[1]["answer"] == "xa1"

    write_jsonl(tmp_path / "a.jsonl", rows(3, "j"))
    got = load_dataset({"path": "json", "data_files": {"train": "a.jsonl", "test": "a.jsonl"},
                        "cache_dir": str(tmp_path / "hfcache"), "reader_cfg": READER}, base_dir=tmp_path)
    assert got.test[2] == {"question": "jq2", "context": "jc2", "answer": "ja2"}


def test_hf_name_not_in_cache_is_an_offline_error(tmp_path):
    pytest.importorskip("datasets")
    with pytest.raises(DataError) as err:
        load_dataset({"path": "nobody/no-such-dataset-xyz", "cache_dir": str(tmp_path / "c"), "reader_cfg": READER},
                     base_dir=tmp_path)
    assert "offline" in str(err.value) and "nobody/no-such-dataset-xyz" in str(err.value)


def test_inline_rows_forms():
    got = load_dataset({"rows": rows(3), "reader_cfg": READER}, base_dir=".")
    assert got.same_split and got.test[0] == {"question": "rq0", "context": "rc0", "answer": "ra0"}
    got = load_dataset({"train_rows": rows(2, "a"), "test_rows": rows(1, "b"), "reader_cfg": READER}, base_dir=".")
    assert not got.same_split and got.train[1]["question"] == "aq1" and got.test[0]["question"] == "bq0"
    got = load_dataset({"test_rows": rows(2), "reader_cfg": {**READER, "input_columns": "question context"}},
                       base_dir=".")
    assert got.same_split and got.input_columns == ["question", "context"]


def test_numeric_range_matches_the_references_seeded_shuffle():
    idx = list(range(20))
    random.Random(5).shuffle(idx)
    assert select_range(20, 5) == idx[:5]
    idx = list(range(20))
    random.Random(10).shuffle(idx)
    assert select_range(20, 0.5) == idx[:10]
    assert select_range(20, 25) == list(range(20))
    assert select_range(20, 0) == list(range(20))
    assert select_range(7, "[ : 3 ]") == [0, 1, 2]


@pytest.mark.parametrize("bad", ["0:3", "[0:3]; import os", "[a:b]", "__import__('os')", True, [1, 2]])
def test_bad_ranges_are_rejected_not_evaluated(bad):
    with pytest.raises(DataError) as err:
        ReaderConfig.from_dict({**READER, "test_range": bad}, file="cfg.py")
    assert "test_range" in str(err.value) and "cfg.py" in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(DataError) as err:
        load_dataset({"path": "nope.jsonl", "reader_cfg": READER}, base_dir=tmp_path)
    assert "nope.jsonl" in str(err.value) and "not found" in str(err.value)


def test_malformed_jsonl_names_line_and_column(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text('{"question": "a", "context": "b", "answer": "c"}\n\n{"question": "a", oops}\n')
    with pytest.raises(DataError) as err:
        load_dataset({"path": "d.jsonl", "reader_cfg": READER}, base_dir=tmp_path)
    msg = str(err.value)
    assert str(p) in msg and "line 3 column 19" in msg


def test_non_object_jsonl_line(tmp_path):
    (tmp_path / "d.jsonl").write_text('[1, 2]\n')
    with pytest.raises(DataError, match="line 1"):
        load_dataset({"path": "d.jsonl", "reader_cfg": READER}, base_dir=tmp_path)


def test_missing_column_names_file_line_and_column(tmp_path):
    items = rows(3)
    del items[1]["context"]
    write_jsonl(tmp_path / "d.jsonl", items)
    with pytest.raises(DataError) as err:
        load_dataset({"path": "d.jsonl", "reader_cfg": READER}, base_dir=tmp_path)
    msg = str(err.value)
    assert "d.jsonl" in msg and "line 2" in msg and "'context'" in msg


def test_csv_row_with_wrong_field_count(tmp_path):
    (tmp_path / "d.csv").write_text("question,context,answer\nq,c,a\nq2,c2\n")
    with pytest.raises(DataError) as err:
        load_dataset({"path": "d.csv", "reader_cfg": READER}, base_dir=tmp_path)
    assert "line 3 column 3" in str(err.value) and "d.csv" in str(err.value)


def test_empty_split_and_empty_range(tmp_path):
    (tmp_path / "d.jsonl").write_text("\n")
    with pytest.raises(DataError, match="empty"):
        load_dataset({"path": "d.jsonl", "reader_cfg": READER}, base_dir=tmp_path)
    write_jsonl(tmp_path / "e.jsonl", rows(3))
    with pytest.raises(DataError, match="selects no rows"):
        load_dataset({"path": "e.jsonl", "reader_cfg": {**READER, "test_range": "[5:9]"}}, base_dir=tmp_path)


def test_missing_split_lists_the_available_ones(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps({"dev": rows(2)}))
    with pytest.raises(DataError) as err:
        load_dataset({"path": "d.json", "reader_cfg": READER}, base_dir=tmp_path)
    assert "'train'" in str(err.value) and "'dev'" in str(err.value)


def test_malformed_json_and_reader_cfg(tmp_path):
    (tmp_path / "d.json").write_text('[{"a": 1},\n {"b": }]')
    with pytest.raises(DataError, match="line 2 column"):
        load_dataset({"path": "d.json", "reader_cfg": READER}, base_dir=tmp_path)
    with pytest.raises(DataError, match="input_columns"):
        load_dataset({"rows": rows(1), "reader_cfg": {"output_column": "answer"}}, base_dir=tmp_path)
    with pytest.raises(DataError, match="reader_cfg"):
        load_dataset({"rows": rows(1)}, base_dir=tmp_path)
