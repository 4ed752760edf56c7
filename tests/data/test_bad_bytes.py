"""Bad bytes in data files: BOM, lone surrogates, NUL, CRLF, huge fields load; non-regular files are refused."""
import json
import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptweave.data import load_dataset
from promptweave.data.roots import data_policy
from promptweave.data.sources import read_file
from promptweave.errors import DataError, PromptweaveError

READER = {"input_columns": ["q"], "output_column": "a"}


def _load(tmp_path, name):
    return load_dataset({"path": name, "reader_cfg": READER}, base_dir=tmp_path)


def test_jsonl_with_bom_and_crlf(tmp_path):
    (tmp_path / "d.jsonl").write_bytes(b'\xef\xbb\xbf{"q": "x", "a": "1"}\r\n{"q": "y", "a": "2"}\r\n')
    assert [r["q"] for r in _load(tmp_path, "d.jsonl").test] == ["x", "y"]


def test_json_and_csv_with_bom(tmp_path):
    (tmp_path / "d.json").write_bytes(b'\xef\xbb\xbf[{"q": "x", "a": "1"}]')
    assert _load(tmp_path, "d.json").test == [{"q": "x", "a": "1"}]
    (tmp_path / "d.csv").write_bytes(b"\xef\xbb\xbfq,a\r\nx,1\r\n")
    assert _load(tmp_path, "d.csv").test == [{"q": "x", "a": "1"}]


def test_lone_surrogates_nul_and_huge_fields_load(tmp_path):
    huge = "z" * 3_000_000
    lines = [json.dumps({"q": "\ud800 alone", "a": "1"}), json.dumps({"q": "nul\x00here", "a": "2"}),
             json.dumps({"q": huge, "a": "3"})]
    (tmp_path / "d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = _load(tmp_path, "d.jsonl").test
    assert got[0]["q"] == "\ud800 alone" and got[1]["q"] == "nul\x00here" and len(got[2]["q"]) == 3_000_000
    with (tmp_path / "h.csv").open("w", encoding="utf-8", newline="") as fh:
        fh.write(f'q,a\n"{huge}",1\n')
    assert len(_load(tmp_path, "h.csv").test[0]["q"]) == 3_000_000


def test_invalid_utf8_is_a_typed_error_naming_the_line(tmp_path):
    (tmp_path / "d.jsonl").write_bytes(b'{"q": "x", "a": "1"}\n{"q": "\xff", "a": "2"}\n')
    with pytest.raises(DataError) as err:
        _load(tmp_path, "d.jsonl")
    assert "line 2" in str(err.value) and "UTF-8" in str(err.value)


@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_non_regular_files_are_refused_at_once(tmp_path, kind):
    if kind == "device":
        if not os.path.exists("/dev/zero"):
            pytest.skip("no /dev/zero here")
        path = "/dev/zero"
        target = tmp_path / "zero.jsonl"
        target.symlink_to(path)
    elif kind == "fifo":
        target = tmp_path / "pipe.jsonl"
        os.mkfifo(target)  # reading it would block forever: it must be refused before any open()
    else:
        target = tmp_path / "dir.jsonl"
        target.mkdir()
    with pytest.raises(DataError) as err:
        read_file(target)
    assert str(target) in str(err.value)
    assert {"device": "character device", "fifo": "FIFO", "folder": "folder"}[kind] in str(err.value)


def test_dev_zero_as_a_dataset_path(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    with pytest.raises(DataError) as err:  # outside the data roots: refused before it is looked at
        load_dataset({"type": "CustomDataset", "path": "/dev/zero", "reader_cfg": READER}, base_dir=tmp_path)
    assert err.value.code == "PW260" and "--allow-data /dev/zero" in str(err.value)
    with data_policy(["/dev/zero"]), pytest.raises(DataError) as err:  # allowed by name: still never opened
        load_dataset({"type": "CustomDataset", "path": "/dev/zero", "reader_cfg": READER}, base_dir=tmp_path)
    assert "/dev/zero" in str(err.value) and "device" in str(err.value)


_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40)
_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
                       lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_text, kids, max_size=3),
                       max_leaves=8)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.dictionaries(_text, _values, max_size=4), max_size=5), bom=st.booleans(),
       crlf=st.booleans())
def test_jsonl_round_trips_any_rows(tmp_path, rows, bom, crlf):
    full = [{**r, "q": r.get("q", "x"), "a": r.get("a", "y")} for r in rows] or [{"q": "x", "a": "y"}]
    text = ("\r\n" if crlf else "\n").join(json.dumps(r) for r in full) + "\n"
    data = text.encode("utf-8")
    (tmp_path / "d.jsonl").write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    got = load_dataset({"path": "d.jsonl", "reader_cfg": READER}, base_dir=tmp_path, project=False).test
    assert got == full


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.binary(max_size=300), suffix=st.sampled_from([".jsonl", ".json", ".csv", ".tsv"]))
def test_arbitrary_bytes_give_rows_or_a_typed_error(tmp_path, blob, suffix):
    (tmp_path / f"d{suffix}").write_bytes(blob)
    try:
        read_file(tmp_path / f"d{suffix}")
    except PromptweaveError as exc:
        assert exc.code.startswith("PW2")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=st.lists(st.lists(st.text(alphabet=string.printable + "\u00e9\u4e2d\x00\u2028", max_size=12),
                               min_size=2, max_size=2), min_size=1, max_size=4),
       bom=st.booleans())
def test_csv_round_trips_any_text(tmp_path, cells, bom):
    import csv
    import io

    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(["q", "a"])
    w.writerows(cells)
    (tmp_path / "d.csv").write_bytes((b"\xef\xbb\xbf" if bom else b"") + buf.getvalue().encode("utf-8"))
    got = read_file(tmp_path / "d.csv")
    assert got.rows == [dict(zip(["q", "a"], r)) for r in cells]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.text(max_size=40), typed=st.booleans())
def test_any_path_in_a_dataset_config_gives_rows_or_a_typed_error(tmp_path, path, typed):
    cfg = {"path": path, "reader_cfg": READER}
    if typed:
        cfg["type"] = "CustomDataset"
    try:
        load_dataset(cfg, base_dir=tmp_path)
    except PromptweaveError as exc:
        assert exc.code.startswith("PW2")
