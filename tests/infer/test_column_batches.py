"""Run batches read by their columns: a compiled chunk's ``indices``, ``labels``, ``shot_ids`` and ``prompts``
equal its records' fields, and the gen and ppl inferencers take them without making any record object."""
from __future__ import annotations

import warnings

import pytest

from promptweave.engine import PromptBuilder
from promptweave.infer import Record, infer_gen, infer_ppl
from promptweave.infer.records import RecordChunk, columns_of
from promptweave.models.base import GenerationParams
from promptweave.models.hf import HFModel
from tests.engine.test_fast_paths import rows, shapes, spec


def chunks_of(name: str, n: int = 300, one_shot: bool = False) -> tuple[list, list]:
    cfg, kind = shapes()[name]
    if one_shot:  # short enough for the tiny model's 512 positions
        key = "ice_num" if "BM25" in cfg["retriever"]["type"] else "fix_id_list"
        cfg = {**cfg, "retriever": {**cfg["retriever"], key: 1 if key == "ice_num" else [0]}}
    missing = "BM25" not in cfg["retriever"]["type"]
    ds, m = spec(cfg, kind, rows(40, 1, missing), rows(n, 2, missing))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        general = list(PromptBuilder(ds, m).build_all(compiled=False))
        return list(PromptBuilder(ds, m).record_chunks()), general


@pytest.mark.parametrize("name", list(shapes()))
def test_columns_equal_the_records_fields_and_make_no_record(name):
    chunks, general = chunks_of(name)
    columnar = [c for c in chunks if isinstance(c, RecordChunk) and c.columnar]
    assert columnar, "compiled plans hand over chunks of columns"
    at = 0
    for c in chunks:
        size = len(c)  # known from the columns, without making the records
        want = general[at:at + size]
        at += size
        if not (isinstance(c, RecordChunk) and c.columnar):
            continue
        indices, prompts, shots = columns_of(c)
        assert list(indices) == [r.index for r in want]
        assert prompts == [r.rendered for r in want]
        assert [list(s) for s in shots] == [list(r.shot_ids) for r in want]
        assert list(c.labels) == [r.label for r in want]
        assert c.columnar  # reading columns made no record
        recs = list(c)  # read as records: made once, then kept
        assert not c.columnar and columns_of(c) is None
        assert [(r.index, r.label, list(r.shot_ids), r.rendered) for r in recs] == [
            (r.index, r.label, list(r.shot_ids), r.rendered) for r in want]
        assert all(a is b for a, b in zip(recs, c, strict=True))
        c[0].extra["note"] = 1
        assert c[0].extra == {"note": 1}  # the same record object, so notes stay
    assert at == len(general)


def test_a_chunk_made_of_records_gathers_its_columns():
    recs = [Record(index=i // 2, rendered=f"p{i}", shot_ids=[i], label="AB"[i % 2], mode="ppl") for i in range(6)]
    c = RecordChunk(recs)
    assert not c.columnar and columns_of(c) is None
    assert (list(c.indices), c.prompts, list(c.labels), list(c.shot_ids)) == (
        [0, 0, 1, 1, 2, 2], [f"p{i}" for i in range(6)], list("ABABAB"), [[i] for i in range(6)])
    assert list(c) == recs and c[3] is recs[3] and len(c) == 6


@pytest.fixture(scope="module")
def lm(tiny_model_dir):
    return HFModel(str(tiny_model_dir), device="cpu", dtype="float32", batch_size=8)


def _small_chunk(name: str) -> tuple[RecordChunk, list]:
    chunks, general = chunks_of(name, 12, one_shot=True)
    [chunk] = chunks
    assert isinstance(chunk, RecordChunk) and chunk.columnar
    return chunk, general


@pytest.mark.parametrize("name", ["W2", "W4ppl"])
def test_ppl_over_columns_equals_ppl_over_records(lm, name):
    chunk, general = _small_chunk(name)
    by_columns = infer_ppl(lm, chunk)
    assert chunk.columnar  # scored from the columns alone
    by_records = infer_ppl(lm, general)
    assert [(r.index, r.labels, r.prediction, r.shot_ids, r.prompts) for r in by_columns] == [
        (r.index, r.labels, r.prediction, r.shot_ids, r.prompts) for r in by_records]
    for a, b in zip(by_columns, by_records, strict=True):
        assert a.ppl == pytest.approx(b.ppl, abs=1e-5)
    assert len(by_columns) == 12 and all(len(r.labels) == 4 for r in by_columns)


@pytest.mark.parametrize("name", ["W1", "W4"])
def test_gen_over_columns_equals_gen_over_records(lm, name):
    chunk, general = _small_chunk(name)
    params = GenerationParams(max_out_len=3)
    by_columns = infer_gen(lm, chunk, params)
    assert chunk.columnar
    by_records = infer_gen(lm, general, params)
    assert [(g.index, g.prompt, g.shot_ids, g.output) for g in by_columns] == [
        (g.index, g.prompt, g.shot_ids, g.output) for g in by_records]
    assert [g.index for g in by_columns] == list(range(12))
