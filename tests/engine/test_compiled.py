"""Compiled plans (engine/compile.py) against the general fill-and-render path."""
import pickle
import warnings

import pytest

from promptweave.conformance.aisbench_common import specs
from promptweave.conformance.icl import builder_for
from promptweave.conformance.runner import iter_cases
from promptweave.engine import PromptBuilder, PromptRecord
from promptweave.engine.compile import Block, plan_source
from promptweave.errors import PromptweaveError
from tests.helpers import API_META, CHATML, make_builder

ROWS = [{"question": "2+2?", "answer": "4"}, {"question": "3+3?", "answer": "6"}, {"question": "1+1?", "answer": "2"}]
DIALOGUE = {"round": [{"role": "HUMAN", "prompt": "Q: {question}"}, {"role": "BOT", "prompt": "A: {answer}"}]}


def _outcome(fn):
    try:
        return [(r.index, r.label, r.shot_ids, r.rendered) for r in fn()]
    except PromptweaveError as exc:
        return f"{type(exc).__name__}: {exc}"


def _builders(case):
    if case["kind"] == "multimodal":
        dataset, model = specs(case)
        fast = PromptBuilder(dataset, model, case.get("mode"))
    else:
        fast = builder_for(case)
    return fast, PromptBuilder(fast.dataset, fast.model, fast.mode, use_plans=False)


def test_every_corpus_case_is_the_same_compiled_and_general(shared_corpus):
    files = sorted(shared_corpus.glob("*.jsonl.gz"))
    assert files
    compared = compiled = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in files:
            for case in iter_cases(path):
                if case.get("kind") not in ("icl", "multimodal"):
                    continue  # multi-turn and LVE cases do not go through PromptBuilder
                try:
                    fast, slow = _builders(case)
                except PromptweaveError:
                    continue  # a config the builder refuses is refused before either path runs
                idx = case["test_index"]
                labels = case.get("labels") or (case["expected"].get("labels")
                                                if isinstance(case["expected"], dict) else None)
                # two rows with the same examples: a run, which build_all compiles
                got = _outcome(lambda fast=fast, idx=idx: fast.build_all([idx, idx]))
                want = _outcome(lambda slow=slow, idx=idx: slow.build_all([idx, idx], compiled=False))
                assert got == want, case["id"]
                if isinstance(got, list):
                    assert list(fast.prompts([idx, idx])) == [r[3] for r in want], case["id"]
                if fast.mode == "ppl" and labels:
                    # build() compiles a (label, ids) plan on its second use
                    for _ in range(2):
                        got = _outcome(lambda b=fast, i=idx, ls=labels: [b.build(i, lab) for lab in ls])
                        want = _outcome(lambda b=slow, i=idx, ls=labels: [b.build(i, lab) for lab in ls])
                        assert got == want, case["id"]
                compared += 1
                compiled += any(type(e) is not list and callable(e) for e in fast._plans.values())
    assert compared > 10_000
    assert compiled > 9_000  # nearly every case takes compiled code, not the fallbacks


def test_every_corpus_case_with_examples_per_row_is_the_same_compiled_and_general(shared_corpus):
    """Rows with examples of their own (BM25, random) go through per-row-example plans: each case's test row,
    four times over with different example lists, built both ways."""
    import dataclasses

    from promptweave.run.executors.shared import PrecomputedRetriever

    compared = through_plans = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in sorted(shared_corpus.glob("*.jsonl.gz")):
            for case in iter_cases(path):
                if case.get("kind") not in ("icl", "multimodal"):
                    continue
                try:
                    fast, _ = _builders(case)
                    if fast.dataset.ice_template is None:
                        continue
                    ids = list(fast.ids_for(case["test_index"]))
                except PromptweaveError:
                    continue
                n_train = len(fast.dataset.train)
                if not ids or n_train < 2:
                    continue
                other = [j for j in range(min(n_train, 4)) if j not in ids][:1] or ids[:1]
                per_row = [ids, ids[::-1] + other, other + ids[1:], ids[:1], other, []]
                row = fast.dataset.test[case["test_index"]]
                ds = dataclasses.replace(fast.dataset, test=[row] * len(per_row),
                                         retriever=PrecomputedRetriever(fast.dataset.retriever, per_row))
                fast = PromptBuilder(ds, fast.model, fast.mode)
                slow = PromptBuilder(ds, fast.model, fast.mode, use_plans=False)
                got = _outcome(lambda fast=fast: fast.build_all())
                want = _outcome(lambda slow=slow: slow.build_all(compiled=False))
                assert got == want, case["id"]
                if isinstance(got, list):
                    assert list(fast.prompts()) == [r[3] for r in want], case["id"]
                compared += 1
                through_plans += any(k[0] == "*shots" for k in fast._plans if type(k) is tuple and k)
    assert compared > 1_000
    assert through_plans > compared // 2  # most cases take the per-row plans, not the general path


def test_generated_source_holds_no_user_text():
    nasty = "'); __import__('os').system('echo hi') #"
    tpl = {"round": [{"role": "HUMAN", "prompt": nasty + " {question} \"\"\" {odd'col}"},
                     {"role": "BOT", "prompt": "{answer}"}]}
    rows = [{"question": "q", "odd'col": "v", "answer": "a"}] * 2
    b = make_builder({"prompt_template": {"type": "PromptTemplate", "template": tpl},
                      "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}},
                     rows, meta=CHATML, inputs=("question", "odd'col"))
    recs = list(b.build_all())
    assert recs[0].rendered == f"<u>{nasty} q \"\"\" v</u>\n<a>"
    plan = next(e for e in b._plans.values() if type(e) is list)[0]
    src = plan_source([Block(plan[0], plan[1], None, None)])
    assert "os" not in src and "odd" not in src and "question" not in src and "<u>" not in src


def test_rows_the_fast_body_rejects_take_the_interpreter():
    rows = [{"question": "2+2?", "answer": "4"}, {"question": 7, "answer": "6"}, {"answer": "2"},
            {"question": None, "answer": "1"}]
    cfg = {"prompt_template": {"type": "PromptTemplate", "template": DIALOGUE},
           "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = [r.rendered for r in make_builder(cfg, rows, meta=CHATML).build_all()]
        slow = [r.rendered for r in make_builder(cfg, rows, meta=CHATML, use_plans=False).build_all()]
    assert fast == slow
    assert fast[1] == "<u>Q: 7</u>\n<a>" and fast[2] == "<u>Q: {question}</u>\n<a>" and fast[3] == "<u>Q: None</u>\n<a>"


def test_per_row_examples_and_ppl_labels_match_the_general_path():
    train = [{"question": f"t{i}", "answer": "AB"[i % 2]} for i in range(12)]
    test = [{"question": f"q{i}", "answer": "AB"[i % 2]} for i in range(9)]
    for retriever in ({"type": "RandomRetriever", "ice_num": 3, "seed": 1},
                      {"type": "FixKRetriever", "fix_id_list": [0, 3]}):
        cfg = {"ice_template": {"type": "PromptTemplate", "template": DIALOGUE},
               "prompt_template": {"type": "PromptTemplate", "ice_token": "</E>",
                                   "template": {lab: {"begin": "</E>", "round": [
                                       {"role": "HUMAN", "prompt": "Q: {question}"},
                                       {"role": "BOT", "prompt": lab}]} for lab in "AB"}},
               "retriever": retriever, "inferencer": {"type": "PPLInferencer"}}
        for meta, kind in ((CHATML, "lm"), (API_META, "api"), (None, "lm")):
            fast = make_builder(cfg, test, train=train, meta=meta, kind=kind)
            slow = make_builder(cfg, test, train=train, meta=meta, kind=kind, use_plans=False)
            got = [(r.index, r.label, r.shot_ids, r.rendered) for r in fast.build_all()]
            assert got == [(r.index, r.label, r.shot_ids, r.rendered) for r in slow.build_all()]
            assert [r[1] for r in got[:4]] == ["A", "B", "A", "B"]
            sub = [(r.index, r.rendered) for r in fast.build_all([5, 2, 2])]
            assert sub == [(r.index, r.rendered) for r in slow.build_all([5, 2, 2])]


def test_prompt_record_keeps_its_fields_notes_and_pickles():
    b = make_builder({"prompt_template": {"type": "PromptTemplate", "template": DIALOGUE},
                      "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}},
                     ROWS, meta=API_META, kind="api")
    rec = list(b.build_all())[1]
    assert (rec.index, rec.mode, rec.label, rec.shot_ids, rec.dataset, rec.model) == (1, "gen", None, [], "t", "m")
    assert rec.rendered == [{"role": "HUMAN", "prompt": "Q: 3+3?"}]
    rec.extra["note"] = 1
    again = pickle.loads(pickle.dumps(rec))
    assert again == rec and again.extra == {"note": 1} and type(again) is PromptRecord
    made = PromptRecord(3, "ppl", "A", [1], None, "x", ppl_context="c", ppl_answer="a")
    assert (made.dataset, made.extra, made.ppl_context, made.ppl_answer) == ("", {}, "c", "a")
    with pytest.raises(AttributeError):
        made.rendered = "y"


def test_out_of_range_index_is_a_data_error():
    b = make_builder({"prompt_template": {"type": "PromptTemplate", "template": "Q: {question}"},
                      "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}, ROWS)
    with pytest.raises(PromptweaveError, match="out of range"):
        list(b.build_all([0, 5]))


def test_compiled_equals_general_on_arbitrary_templates_and_rows():
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies
    chars = st.sampled_from(list("ab {}\n:</E>\ue000\ue001é"))
    literal = st.text(chars, max_size=8)
    value = st.one_of(st.text(chars, max_size=8), st.integers(-5, 5), st.none())
    row = st.fixed_dictionaries({"question": value, "answer": value},
                                optional={"extra": st.text(chars, max_size=4)})

    @hyp.settings(max_examples=100, deadline=None, derandomize=True)
    @hyp.given(before=literal, after=literal, rows=st.lists(row, min_size=2, max_size=4),
               shape=st.sampled_from([(CHATML, "lm"), (API_META, "api"), (None, "lm")]))
    def check(before, after, rows, shape):
        tpl = {"round": [{"role": "HUMAN", "prompt": before + "{question}" + after},
                         {"role": "BOT", "prompt": "{answer}"}]}
        cfg = {"prompt_template": {"type": "PromptTemplate", "template": tpl},
               "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}
        meta, kind = shape
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fast = make_builder(cfg, rows, meta=meta, kind=kind)
            slow = make_builder(cfg, rows, meta=meta, kind=kind, use_plans=False)
            want = [r.rendered for r in slow.build_all()]
            assert [r.rendered for r in fast.build_all()] == want
            assert list(fast.prompts()) == want

    check()
