"""Retrieval benchmark: exact BM25 vs bm25s and a plain rank_bm25-style loop, tie agreement, TopK search.

    PYTHONPATH=src python benchmarks/retrieval.py            # full size (about 2-4 minutes on 2 cores)
    PYTHONPATH=src python benchmarks/retrieval.py --small    # quick look

BM25 (W4): ``--docs`` synthetic documents (Zipf vocabulary), ``--queries`` queries, 8 shots.
Baselines, timed in this same process: bm25s (sparse-matrix BM25, if installed: ``pip install
bm25s``; its scores are its own approximation of Okapi, so only its speed is compared) and the
straightforward loop rank_bm25 uses (per query term, a Python pass over every document's
term-frequency dict) on ``--baseline-queries`` queries.
Agreement with OpenCompass: the reference run is rank_bm25's scores (computed here with the same
formula and order from postings, and checked bit-identical to ``rank_bm25.BM25Okapi`` on a sample)
and OpenCompass's selection ``np.argsort(scores)[::-1][:8]``. Rows are split into: no equal scores
among the top 9 (the ids and their order follow from the scores alone), a tie at the cut (the 8th
and 9th scores equal: which rows make the top 8 depends on the tie rule), and a tie inside the
top 8 only (the same rows, the order depends on the rule). Reported for ``tie_break="id"``
(default) and ``"reference"``.
TopK: ``--topk-docs`` documents embedded with the bundled all-MiniLM-L6-v2, then
``--topk-queries`` queries; reported as queries/s and peak memory (each part runs in
its own process so the peaks are separate).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

WORDS = ("time year people way day man thing woman life child world school state family student group "
         "country problem hand part place case week company system program question work government number "
         "night point home water room mother area money story fact month lot right study book eye job word "
         "business issue side kind head house service friend father power hour game line end member law car "
         "city community name president team minute idea kid body information back parent face others level "
         "office door health person art war history party result change morning reason research girl guy "
         "moment air teacher force education").split()


def zipf_docs(n: int, vocab: int, seed: int, lo: int, hi: int, s: float = 1.1) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, vocab + 1) ** s
    p /= p.sum()
    lens = rng.integers(lo, hi + 1, n)
    flat = rng.choice(vocab, int(lens.sum()), p=p)
    names = np.array([f"{WORDS[i % len(WORDS)]}{i // len(WORDS)}" for i in range(vocab)])
    out, pos = [], 0
    for length in lens:
        out.append(names[flat[pos:pos + length]].tolist())
        pos += length
    return out


class PlainBM25:
    """The straightforward loop (rank_bm25.BM25Okapi's algorithm), written out as the baseline."""

    def __init__(self, corpus, k1=1.5, b=0.75, epsilon=0.25):
        self.k1, self.b = k1, b
        self.doc_freqs, self.doc_len, nd = [], [], {}
        for doc in corpus:
            self.doc_len.append(len(doc))
            freq = {}
            for w in doc:
                freq[w] = freq.get(w, 0) + 1
            self.doc_freqs.append(freq)
            for w in freq:
                nd[w] = nd.get(w, 0) + 1
        self.n = len(corpus)
        self.avgdl = sum(self.doc_len) / self.n
        self.idf, total, negative = {}, 0.0, []
        for w, m in nd.items():
            v = math.log(self.n - m + 0.5) - math.log(m + 0.5)
            self.idf[w] = v
            total += v
            if v < 0:
                negative.append(w)
        eps = epsilon * total / len(self.idf)
        for w in negative:
            self.idf[w] = eps
        # What the dense reference below needs: each term's postings.
        self.postings = {}
        for d, freq in enumerate(self.doc_freqs):
            for w, f in freq.items():
                self.postings.setdefault(w, ([], []))
                self.postings[w][0].append(d)
                self.postings[w][1].append(f)

    def get_scores(self, query):
        score = np.zeros(self.n)
        doc_len = np.array(self.doc_len)
        for q in query:
            q_freq = np.array([(doc.get(q) or 0) for doc in self.doc_freqs])
            score += (self.idf.get(q) or 0) * (q_freq * (self.k1 + 1) /
                                               (q_freq + self.k1 * (1 - self.b + self.b * doc_len / self.avgdl)))
        return score

    def get_scores_dense(self, query):
        """The same formula, same order, with each term's tf column built from its postings."""
        score = np.zeros(self.n)
        if not hasattr(self, "_doc_len"):
            self._doc_len = np.array(self.doc_len)
        doc_len = self._doc_len
        for q in query:
            q_freq = np.zeros(self.n, dtype=np.int64)
            if q in self.postings:
                ids, tfs = self.postings[q]
                q_freq[ids] = tfs
            score += (self.idf.get(q) or 0) * (q_freq * (self.k1 + 1) /
                                               (q_freq + self.k1 * (1 - self.b + self.b * doc_len / self.avgdl)))
        return score


def top8(scores):
    order = np.lexsort((np.arange(scores.size), -scores))
    return order[:8].tolist()


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tie_kind(scores: np.ndarray, k: int) -> str:
    top = np.sort(scores)[::-1][:k + 1]
    if top.size > k and top[k - 1] == top[k]:
        return "tie_at_cut"
    return "tie_inside" if np.unique(top[:k]).size < top[:k].size else "untied"


def bench_bm25(a) -> dict:
    from promptweave.shots.bm25 import BM25Index

    docs = zipf_docs(a.docs, a.vocab, 0, 10, 60)
    queries = zipf_docs(a.queries, a.vocab, 1, 4, 16)
    t = time.perf_counter()
    index = BM25Index.build(docs)
    build_s = time.perf_counter() - t
    if a.speed_only:  # ours against bm25s only, no reference run
        return {"docs": a.docs, "queries": a.queries, **bench_bm25s(docs, queries, index)}
    t = time.perf_counter()
    ours = index.search(queries, 8)
    ours_s = time.perf_counter() - t
    t = time.perf_counter()
    assert index.search(queries, 8, threads=1) == ours
    ours_serial_s = time.perf_counter() - t
    t = time.perf_counter()
    ours_ref = index.search(queries, 8, tie_break="reference")
    ours_ref_s = time.perf_counter() - t

    plain = PlainBM25(docs)
    sample = queries[:a.baseline_queries]
    t = time.perf_counter()
    plain_top = [top8(plain.get_scores(q)) for q in sample]
    plain_s = time.perf_counter() - t

    # the reference run: rank_bm25's scores, OpenCompass's argsort selection
    kinds = {"untied": [0, 0, 0], "tie_at_cut": [0, 0, 0], "tie_inside": [0, 0, 0]}  # rows, id ok, reference ok
    same_set_at_cut = 0
    same = 0
    for i, q in enumerate(queries):
        ref_scores = plain.get_scores_dense(q)
        same += ours[i] == top8(ref_scores)
        ref_ids = [int(x) for x in np.argsort(ref_scores)[::-1][:8]]
        kind = tie_kind(ref_scores, 8)
        kinds[kind][0] += 1
        kinds[kind][1] += ours[i] == ref_ids
        kinds[kind][2] += ours_ref[i] == ref_ids
        if kind == "tie_at_cut":
            same_set_at_cut += set(ours[i]) == set(ref_ids)
    same_plain = sum(ours[i] == plain_top[i] for i in range(len(sample)))
    bitexact = sum(np.array_equal(index.scores(q), plain.get_scores_dense(q)) for q in queries[:200])
    res = {"docs": a.docs, "queries": a.queries, "vocab": a.vocab, "index_build_s": round(build_s, 2),
           "ours_qps": round(a.queries / ours_s, 1), "ours_qps_one_thread": round(a.queries / ours_serial_s, 1),
           "ours_qps_tie_break_reference": round(a.queries / ours_ref_s, 1),
           "threads": min(8, os.cpu_count() or 1), "plain_loop_qps": round(len(sample) / plain_s, 3),
           "speedup_vs_plain_loop": round((a.queries / ours_s) / (len(sample) / plain_s), 1),
           "same_top8_as_score_then_id_order": f"{same}/{a.queries}",
           "same_top8_as_plain_loop": f"{same_plain}/{len(sample)}",
           "bit_identical_scores": f"{bitexact}/{min(200, a.queries)}",
           "agreement_with_opencompass": {
               kind: {"rows": n, "tie_break=id": f"{ok}/{n}", "tie_break=reference": f"{ref_ok}/{n}"}
               for kind, (n, ok, ref_ok) in kinds.items()},
           "tie_at_cut_same_set_tie_break=id": f"{same_set_at_cut}/{kinds['tie_at_cut'][0]}"}
    try:
        import rank_bm25

        rb = rank_bm25.BM25Okapi(docs)
        n = min(5, len(sample))
        res["scores_bit_identical_to_rank_bm25"] = (
            f"{sum(np.array_equal(rb.get_scores(q), index.scores(q)) for q in sample[:n])}/{n}")
    except ImportError:
        res["scores_bit_identical_to_rank_bm25"] = "rank_bm25 not installed"
    res.update(bench_bm25s(docs, queries, index))
    res["peak_rss_mib"] = round(peak_mib(), 1)
    return res


def bench_bm25s(docs: list, queries: list, index) -> dict:
    """bm25s (if installed) indexing and searching the same tokens, 8 per query; searches alternate with ours
    (medians of 5), so load from other processes lands on both."""
    try:
        import bm25s
    except ImportError:
        return {"bm25s": "not installed (pip install bm25s, or the [bench] extra)"}
    t = time.perf_counter()
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="robertson")
    retriever.index(docs, show_progress=False)
    index_s = time.perf_counter() - t
    threads = min(8, os.cpu_count() or 1)
    ours_t, theirs_t = [], []
    for _ in range(5):
        t = time.perf_counter()
        index.search(queries, 8, threads=threads)
        ours_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        retriever.retrieve(queries, k=8, show_progress=False, n_threads=threads)
        theirs_t.append(time.perf_counter() - t)
    ours_s, theirs_s = statistics.median(ours_t), statistics.median(theirs_t)
    return {"bm25s_version": bm25s.__version__, "bm25s_index_s": round(index_s, 2),
            "bm25s_qps": round(len(queries) / theirs_s, 1), "ours_qps_alternating": round(len(queries) / ours_s, 1),
            "ours_time_vs_bm25s": round(ours_s / theirs_s, 2)}


def bench_topk(a) -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from promptweave.shots import cache
    from promptweave.shots.embed import embed, inner_product_top_k, load_encoder, resolve_model

    docs = [" ".join(d) for d in zipf_docs(a.topk_docs, 2000, 2, 8, 30)]
    queries = [" ".join(d) for d in zipf_docs(a.topk_queries, 2000, 3, 8, 30)]
    t = time.perf_counter()
    load_encoder(None)
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    doc_emb = embed(docs, batch_size=64, use_cache=False)
    doc_s = time.perf_counter() - t
    t = time.perf_counter()
    q_emb = embed(queries, batch_size=64, use_cache=False)
    q_embed_s = time.perf_counter() - t
    t = time.perf_counter()
    inner_product_top_k(q_emb, doc_emb, 8)
    search_s = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:  # second run of the same split: the cache path
        os.environ["PROMPTWEAVE_CACHE"] = tmp
        cache.save_arrays("embed", cache.key_of("embed", {"model": resolve_model(None)}, docs), {"emb": doc_emb})
        t = time.perf_counter()
        embed(docs, batch_size=64)
        cached_s = time.perf_counter() - t
        assert np.array_equal(embed(docs), doc_emb), "cache key mismatch: the cached run re-embedded"
    return {"docs": a.topk_docs, "queries": a.topk_queries, "model_load_s": round(load_s, 2),
            "doc_embed_per_s": round(a.topk_docs / doc_s, 1),
            "queries_per_s_end_to_end": round(a.topk_queries / (q_embed_s + search_s), 1),
            "search_only_queries_per_s": round(a.topk_queries / search_s, 1),
            "cached_index_load_s": round(cached_s, 3), "peak_rss_mib": round(peak_mib(), 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=["bm25", "topk", "all"], default="all")
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=2_000)
    ap.add_argument("--vocab", type=int, default=50_000)
    ap.add_argument("--baseline-queries", type=int, default=20)
    ap.add_argument("--topk-docs", type=int, default=10_000)
    ap.add_argument("--topk-queries", type=int, default=1_000)
    ap.add_argument("--small", action="store_true", help="a quick run at a tenth of the size")
    ap.add_argument("--speed-only", action="store_true", help="BM25: ours against bm25s only")
    a = ap.parse_args()
    if a.small:
        a.docs, a.queries, a.topk_docs, a.topk_queries, a.baseline_queries = 10_000, 500, 1_000, 200, 10
    if a.part == "all":
        for part in ("bm25", "topk"):
            args = [sys.executable, __file__, "--part", part] + [x for x in sys.argv[1:]]
            subprocess.run(args, check=True)
        return
    res = bench_bm25(a) if a.part == "bm25" else bench_topk(a)
    print(json.dumps({a.part: res}, indent=1), flush=True)


if __name__ == "__main__":
    main()
