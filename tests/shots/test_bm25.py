import math
import random

import numpy as np
import pytest

from promptweave.errors import RetrieverError
from promptweave.shots import build_retriever
from promptweave.shots.bm25 import BM25Index, BM25Retriever
from promptweave.shots.tokenize import get_tokenizer, regex_tokenize


def reference_scores(corpus, query, k1=1.5, b=0.75, epsilon=0.25):
    """Okapi BM25 written out plainly, as rank_bm25.BM25Okapi computes it."""
    n = len(corpus)
    avgdl = sum(len(d) for d in corpus) / n
    freqs = []
    df = {}
    for doc in corpus:
        f = {}
        for w in doc:
            f[w] = f.get(w, 0) + 1
        freqs.append(f)
        for w in f:
            df[w] = df.get(w, 0) + 1
    idf, total, negative = {}, 0.0, []
    for w, m in df.items():
        idf[w] = math.log(n - m + 0.5) - math.log(m + 0.5)
        total += idf[w]
        if idf[w] < 0:
            negative.append(w)
    for w in negative:
        idf[w] = epsilon * total / len(idf)
    doc_len = np.array([len(d) for d in corpus])
    score = np.zeros(n)
    for q in query:
        tf = np.array([f.get(q, 0) for f in freqs])
        score += idf.get(q, 0) * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl)))
    return score


def reference_top(scores, k, skip=None):
    order = sorted((i for i in range(len(scores)) if i != skip), key=lambda i: (-scores[i], i))
    return order[:k]


def zipf_corpus(n_docs, vocab=300, seed=0, lo=3, hi=25):
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, vocab + 1) ** 1.1
    p /= p.sum()
    return [[f"w{t}" for t in rng.choice(vocab, rng.integers(lo, hi), p=p)] for _ in range(n_docs)]


def test_scores_are_bit_identical_to_the_reference_formula():
    docs = zipf_corpus(400)
    queries = zipf_corpus(60, seed=1, lo=1, hi=12) + [["w0", "w0", "w0"], ["unknown", "w5"], []]
    idx = BM25Index.build(docs)
    for q in queries:
        ref = reference_scores(docs, q)
        assert np.array_equal(idx.scores(q), ref)
        assert idx.search([q], 8)[0] == reference_top(ref, 8)


def test_search_with_common_terms_as_columns_is_the_reference_choice(monkeypatch):
    import promptweave.shots.bm25 as bm25

    docs = zipf_corpus(500, vocab=120, seed=3)
    queries = zipf_corpus(80, vocab=120, seed=4, lo=1, hi=14) + [["w0"] * 4, ["nope"], []]
    idx = BM25Index.build(docs)
    assert len(idx._dense()) >= 5  # the common terms do take the column path here
    for q in queries:
        assert np.array_equal(idx._scores_fast(idx.query_terms(q)), reference_scores(docs, q))
    got = idx.search(queries, 8, exclude=list(range(len(queries))), threads=2)
    assert got == [reference_top(reference_scores(docs, q), 8, skip=i) for i, q in enumerate(queries)]
    monkeypatch.setattr(bm25, "DENSE_BUDGET", 0)
    plain = BM25Index.build(docs)
    assert not plain._dense()
    assert plain.search(queries, 8, exclude=list(range(len(queries))), threads=1) == got


def test_common_terms_get_epsilon_idf_and_repeats_count_each_time():
    docs = [["a", "b"], ["a", "c"], ["a", "d"], ["e"]]
    idx = BM25Index.build(docs)
    # 'a' is in 3 of 4 docs: ln(1.5) - ln(3.5) < 0, replaced by 0.25 * mean idf.
    ref_once = reference_scores(docs, ["a"])
    assert ref_once[0] > 0 and np.array_equal(idx.scores(["a"]), ref_once)
    assert np.allclose(idx.scores(["a", "a"]), 2 * ref_once)
    assert np.array_equal(idx.scores(["a", "b", "a"]), reference_scores(docs, ["a", "b", "a"]))


def test_ties_go_to_the_lower_index_and_same_split_never_returns_itself():
    rows = [{"t": "red apple"}, {"t": "green pear"}, {"t": "red apple"}, {"t": "red apple"}, {"t": "blue sky"}]
    r = BM25Retriever(ice_num=2, input_columns=["t"])
    got = r.select(rows, rows, same_split=True)
    assert got[0] == [2, 3] and got[2] == [0, 3] and got[3] == [0, 2]
    assert all(i not in ids and len(set(ids)) == len(ids) for i, ids in enumerate(got))
    # Different splits: the identical row is allowed and comes first.
    assert r.select(rows, [{"t": "red apple"}])[0] == [0, 2]


def test_ice_num_larger_than_train_returns_every_other_row_once():
    rows = [{"t": f"x{i} y"} for i in range(4)]
    got = BM25Retriever(ice_num=10, input_columns=["t"]).select(rows, rows, same_split=True)
    assert [sorted(g) for g in got] == [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]]


def test_retriever_uses_only_input_columns_and_records_settings():
    train = [{"q": "alpha beta", "a": "gamma"}, {"q": "gamma delta", "a": "alpha"}, {"q": "eta", "a": "gamma"},
             {"q": "zeta", "a": "gamma"}]
    test = [{"q": "gamma", "a": "beta"}]
    r = build_retriever({"type": "BM25Retriever", "ice_num": 1, "input_columns": ["q"]})
    got = r.retrieve(train, test)
    assert got.ids == [[1]]
    assert got.settings == {"type": "BM25Retriever", "ice_num": 1, "tokenizer": "regex", "k1": 1.5, "b": 0.75,
                            "epsilon": 0.25, "input_columns": ["q"]}


def test_index_is_cached_on_disk_keyed_by_data_and_settings(tmp_path):
    docs = [{"t": " ".join(d)} for d in zipf_corpus(50)]
    first = BM25Retriever(ice_num=3, input_columns=["t"])
    a = first.select(docs, docs[:5])
    assert first.cache_hit is False
    assert list((tmp_path / "pwcache" / "bm25").glob("*.npz"))
    second = BM25Retriever(ice_num=3, input_columns=["t"])
    assert second.select(docs, docs[:5]) == a and second.cache_hit is True
    other = BM25Retriever(ice_num=3, input_columns=["t"], k1=1.2)
    other.select(docs, docs[:5])
    assert other.cache_hit is False  # different settings, different key
    changed = docs[:-1] + [{"t": "something new"}]
    third = BM25Retriever(ice_num=3, input_columns=["t"])
    third.select(changed, docs[:5])
    assert third.cache_hit is False  # different data, different key


def test_cached_index_round_trips_odd_tokens():
    docs = [["a\x00b", "é", "x" * 300], ["é", "z"]]
    idx = BM25Index.build(docs)
    back = BM25Index.from_arrays(idx.to_arrays())
    assert back.vocab == idx.vocab
    assert np.array_equal(back.scores(["é", "a\x00b"]), idx.scores(["é", "a\x00b"]))


def test_tokenizers():
    assert regex_tokenize("Don't stop, 3.5 times!") == ["Don", "'", "t", "stop", ",", "3", ".", "5", "times", "!"]
    assert get_tokenizer("lower")("Ab CD") == ["ab", "cd"]
    with pytest.raises(RetrieverError, match="unknown tokenizer"):
        get_tokenizer("spacy")


def test_nltk_tokenizer_matches_word_tokenize_where_installed():
    nltk_tok = pytest.importorskip("nltk.tokenize")
    try:
        nltk_tok.word_tokenize("probe.")
    except LookupError:
        with pytest.raises(RetrieverError, match="punkt"):
            get_tokenizer("nltk")
        return
    assert get_tokenizer("nltk")("Don't stop.") == nltk_tok.word_tokenize("Don't stop.")


def test_agrees_with_rank_bm25_where_installed():
    rank_bm25 = pytest.importorskip("rank_bm25")
    docs = zipf_corpus(300, seed=3)
    ref = rank_bm25.BM25Okapi(docs)
    idx = BM25Index.build(docs)
    rnd = random.Random(0)
    for q in zipf_corpus(40, seed=4, lo=1, hi=10):
        q = q + [rnd.choice(q)]  # a repeated term
        assert np.array_equal(idx.scores(q), ref.get_scores(q))


def test_threaded_search_gives_the_serial_result():
    docs = zipf_corpus(500, seed=7)
    queries = zipf_corpus(150, seed=8, lo=1, hi=8)
    idx = BM25Index.build(docs)
    exclude = list(range(150))
    serial = idx.search(queries, 5, exclude=exclude, threads=1)
    assert idx.search(queries, 5, exclude=exclude, threads=3) == serial
    assert all(i not in ids for i, ids in enumerate(serial))


def _tied_corpus():
    # short documents from a small vocabulary, many exact duplicates: plenty of equal scores
    base = zipf_corpus(120, vocab=30, seed=11, lo=1, hi=4)
    return base + base[:80] + base[:40]


def _tie_at_cut_or_inside(scores, k):
    top = np.sort(scores)[::-1][:k + 1]
    return len(set(top.tolist())) < len(top)


def test_reference_tie_break_is_numpy_argsort_on_rank_bm25_scores():
    rank_bm25 = pytest.importorskip("rank_bm25")
    docs = _tied_corpus()
    ref = rank_bm25.BM25Okapi(docs)
    idx = BM25Index.build(docs)
    queries = zipf_corpus(80, vocab=30, seed=12, lo=1, hi=4)
    got = idx.search(queries, 5, tie_break="reference")
    tied = 0
    for q, ids in zip(queries, got, strict=True):
        scores = ref.get_scores(q)
        assert ids == [int(a) for a in np.argsort(scores)[::-1][:5]]  # OpenCompass's expression
        tied += _tie_at_cut_or_inside(scores, 5)
    assert tied > 40  # the corpus really exercises ties


def test_default_tie_break_is_descending_score_then_ascending_id_and_agrees_where_untied():
    untied = tied = 0
    for docs, queries in ((_tied_corpus(), zipf_corpus(80, vocab=30, seed=12, lo=1, hi=4)),
                          (zipf_corpus(400), zipf_corpus(60, seed=1, lo=2, hi=12))):
        idx = BM25Index.build(docs)
        default, reference = idx.search(queries, 5), idx.search(queries, 5, tie_break="reference")
        for q, a, b in zip(queries, default, reference, strict=True):
            scores = reference_scores(docs, q)
            assert a == reference_top(scores, 5)
            if _tie_at_cut_or_inside(scores, 5):
                tied += 1
            else:
                untied += 1
                assert a == b
    assert untied >= 20 and tied >= 20


def test_reference_tie_break_with_same_split_drops_only_the_row_itself():
    rows = [{"t": "red apple"}, {"t": "green pear"}, {"t": "red apple"}, {"t": "red apple"}, {"t": "blue sky"}]
    r = BM25Retriever(ice_num=2, input_columns=["t"], tie_break="reference", use_cache=False)
    got = r.select(rows, rows, same_split=True)
    idx = r.index([row["t"] for row in rows])
    for i, ids in enumerate(got):
        order = [int(a) for a in np.argsort(idx.scores(r.tokenize(rows[i]["t"])))[::-1] if a != i]
        assert ids == order[:2]
    assert r.settings()["tie_break"] == "reference"
    with pytest.raises(RetrieverError, match="tie_break"):
        BM25Retriever(ice_num=2, tie_break="random")
