"""The fast paths (ppl append loop, records pointing into their chunk's prompt list, shared per-row-example
probes, run batches) against the general path, on W1-W4-shaped generated data."""
import pickle
import random
import warnings

import pytest

from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder, PromptRecord
from promptweave.infer.records import RecordChunk, prompts_of
from promptweave.work.batches import batches as _batches
from promptweave.work.task import LazyRecords

META = {"round": [{"role": "HUMAN", "begin": "<|im_start|>user\n", "end": "<|im_end|>\n"},
                  {"role": "BOT", "begin": "<|im_start|>assistant\n", "end": "<|im_end|>\n", "generate": True}]}
API_META = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}]}
Q = "{question}\nA. {A}\nB. {B}\nC. {C}\nD. {D}\nAnswer:"
COLS = ["question", "A", "B", "C", "D"]
DIALOGUE = {"round": [{"role": "HUMAN", "prompt": Q}, {"role": "BOT", "prompt": "{answer}"}]}


def rows(n, seed, missing=True):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(40)]
    out = [{c: " ".join(rng.choices(words, k=rng.randint(1, 6))) for c in COLS} | {"answer": rng.choice("ABCD")}
           for _ in range(n)]
    out[3]["B"] = 17  # a non-str value and a missing column: those rows go through the interpreter
    if missing:  # (BM25 refuses a row without one of its input columns)
        del out[5]["C"]
    return out


def shapes():
    w1 = {"ice_template": {"type": "PromptTemplate", "ice_token": "</E>", "template": {"begin": "</E>", **DIALOGUE}},
          "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1, 2, 3, 4]},
          "inferencer": {"type": "GenInferencer"}}
    w2 = {"ice_template": {"type": "PromptTemplate", "template": DIALOGUE},
          "prompt_template": {"type": "PromptTemplate", "ice_token": "</E>", "template": {
              lab: {"begin": "</E>", "round": [{"role": "HUMAN", "prompt": Q}, {"role": "BOT", "prompt": lab}]}
              for lab in "ABCD"}},
          "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1, 2, 3, 4]},
          "inferencer": {"type": "PPLInferencer"}}
    w3 = {"prompt_template": {"type": "PromptTemplate", "template": DIALOGUE},
          "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}
    w4 = {**w1, "retriever": {"type": "BM25Retriever", "ice_num": 8}}
    w4ppl = {**w2, "retriever": {"type": "BM25Retriever", "ice_num": 3}}
    return {"W1": (w1, "lm"), "W2": (w2, "lm"), "W3": (w3, "api"), "W4": (w4, "lm"), "W4ppl": (w4ppl, "lm")}


def spec(cfg, kind, train, test):
    ds = DatasetSpec.from_config({"abbr": "b", "reader_cfg": {"input_columns": COLS, "output_column": "answer"},
                                  "infer_cfg": cfg}, train=train, test=test)
    return ds, ModelSpec.from_config({"abbr": "m", "kind": kind, "meta_template": API_META if kind == "api" else META})


def fields(recs):
    return [(r.index, r.mode, r.label, list(r.shot_ids), r.rendered, r.dataset, r.model) for r in recs]


@pytest.mark.parametrize("name", list(shapes()))
def test_w_shapes_fast_paths_equal_the_general_path(name):
    cfg, kind = shapes()[name]
    missing = "BM25" not in cfg["retriever"]["type"]
    # more than one 4,096-row chunk (BM25 shapes: fewer rows, as each builder retrieves for all of them)
    n = 4200 if missing else 300
    train, test = rows(40, 1, missing), rows(n, 2, missing)
    ds, m = spec(cfg, kind, train, test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fields(PromptBuilder(ds, m).build_all(compiled=False))
        b = PromptBuilder(ds, m)
        assert fields(b.build_all()) == want
        if not missing:  # the per-row-example plans served it, not the general path
            assert any(k[0] == "*shots" for k in b._plans)
        assert list(PromptBuilder(ds, m).prompts()) == [w[4] for w in want]
        some = [n - 1, 3, 5, n // 2, n // 2 - 1, 3]
        assert fields(b.build_all(some)) == fields(PromptBuilder(ds, m).build_all(some, compiled=False))
        chunks = list(PromptBuilder(ds, m).record_chunks())
        assert [f for c in chunks for f in fields(c)] == want
        assert [p for c in chunks for p in prompts_of(c)] == [w[4] for w in want]
        # a second builder over the same templates (shared probes) builds the same prompts
        assert list(PromptBuilder(ds, m).prompts()) == [w[4] for w in want]
    per_row = 4 if "ppl" in cfg["inferencer"]["type"].lower() else 1
    assert sum(len(c) for c in chunks) == len(test) * per_row


def test_ppl_rows_keep_their_labels_in_order_in_the_append_loop():
    cfg, kind = shapes()["W2"]
    ds, m = spec(cfg, kind, rows(10, 1), rows(7, 2))
    recs = list(PromptBuilder(ds, m).build_all())
    assert [(r.index, r.label) for r in recs] == [(i, lab) for i in range(7) for lab in "ABCD"]
    assert all(r.rendered.endswith(f"<|im_start|>assistant\n{r.label}<|im_end|>\n") for r in recs)


def test_records_point_into_their_chunk_and_still_behave_as_alone():
    cfg, kind = shapes()["W3"]
    ds, m = spec(cfg, kind, rows(6, 1), rows(20, 2))
    chunk = next(PromptBuilder(ds, m).record_chunks())
    assert isinstance(chunk, RecordChunk)
    assert chunk.prompts is chunk[7][1]  # one list for the whole chunk: no pass per record to gather it
    rec = chunk[7]
    again = pickle.loads(pickle.dumps(rec))
    assert again == rec and again.rendered == rec.rendered and again.index == 7
    assert len(again[1]) == 1  # pickled alone, not with its chunk's other prompts
    assert rec != chunk[8] and rec == PromptRecord(7, "gen", None, [], None, rec.rendered, "b", "m")
    assert "rendered=" in repr(rec)
    with pytest.raises(TypeError):
        hash(rec)


def test_shared_probe_is_not_reused_for_another_meta_template():
    cfg, _ = shapes()["W4"]
    train, test = rows(30, 1, False), rows(50, 2, False)
    ds, lm = spec(cfg, "lm", train, test)
    other = ModelSpec.from_config({"abbr": "m", "kind": "lm", "meta_template": {"round": [
        {"role": "HUMAN", "begin": "[U]", "end": "[/U]"}, {"role": "BOT", "begin": "[A]", "end": "[/A]",
                                                            "generate": True}]}})
    for model in (lm, other, lm):
        got = list(PromptBuilder(ds, model).prompts())
        assert got == [r.rendered for r in PromptBuilder(ds, model).build_all(compiled=False)]
    assert "[U]" in list(PromptBuilder(ds, other).prompts())[0]


@pytest.mark.parametrize("name", ["W1", "W2", "W4ppl"])
def test_run_batches_are_bounded_keep_labels_together_and_cover_every_row(name):
    cfg, kind = shapes()[name]
    test = rows(300, 2, False)
    ds, m = spec(cfg, kind, rows(20, 1, False), test)
    b = PromptBuilder(ds, m)
    per_row = 4 if name != "W1" else 1
    todo = [i for i in range(300) if i % 7]  # a resumed run: some rows already done
    lazy = LazyRecords(b.build_all, todo, per_row=per_row, chunk=64, chunks=b.record_chunks)
    batches = list(_batches(lazy, 50))
    assert all(isinstance(x, RecordChunk) for x in batches)
    assert [len({r.index for r in x}) for x in batches] == [50] * 5 + [len(todo) - 250]
    assert [r.index for x in batches for r in x] == [i for i in todo for _ in range(per_row)]
    assert [p for x in batches for p in x.prompts] == [r.rendered for r in PromptBuilder(ds, m).build_all(
        todo, compiled=False)]
    # the same through a LazyRecords without the builder's chunks, and its row slice
    plain = LazyRecords(b.build_all, todo, per_row=per_row)
    assert [[r.index for r in x] for x in plain.batches(50)] == [[r.index for r in x] for x in batches]
    assert [r.index for x in lazy.select_rows(10, 20).batches(4) for r in x] == \
        [i for i in todo[10:20] for _ in range(per_row)]


def test_shared_row_functions_follow_the_examples_rows_and_settings():
    cfg, kind = shapes()["W1"]
    train, test = rows(10, 1, False), rows(30, 2, False)
    ds, m = spec(cfg, kind, train, test)
    first = list(PromptBuilder(ds, m).prompts())
    assert list(PromptBuilder(ds, m).prompts()) == first  # a second builder reuses the compiled function
    train[2]["question"] = "an edited example"  # the same split object, one example changed in place
    got = list(PromptBuilder(ds, m).prompts())
    assert got != first and all("an edited example" in p for p in got)
    assert got == [r.rendered for r in PromptBuilder(ds, m).build_all(compiled=False)]
    ds.abbr = "other"  # records carry the dataset's abbr: not taken from another builder's function
    assert {r.dataset for r in PromptBuilder(ds, m).build_all()} == {"other"}
