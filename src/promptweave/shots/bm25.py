"""Okapi BM25 exactly as ``rank_bm25.BM25Okapi`` scores it, vectorised over posting lists.

Per term ``t`` and document ``d``: ``idf(t) * tf*(k1+1) / (tf + k1*(1-b+b*|d|/avgdl))`` with
``idf(t) = ln(N-n+0.5) - ln(n+0.5)``; a negative idf is replaced by ``epsilon * mean idf``.
A query's score adds one term contribution per query token, repeats included.

The contribution of every (term, document) pair is computed once with the same
floating-point operations as the reference, and a query's scores are summed in
query-token order, so scores are bit-identical to the reference.

Choosing the top k: where the k-th and (k+1)-th scores differ and no two of the
top k are equal, the ids and their order follow from the scores alone, and are
the reference's. OpenCompass takes ``np.argsort(scores)[::-1][:k]``, whose order
among equal scores is whatever NumPy's default (unstable, SIMD-dispatched) sort
leaves, so it can change with the CPU. ``tie_break="id"`` (the default) orders
by descending score, then ascending id, on every machine; ``tie_break="reference"``
makes that same ``argsort`` call on the same score array, so it reproduces
OpenCompass's choice on the machine it runs on (a full sort per query: slower).
"""
from __future__ import annotations

import json
import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from promptweave.errors import RetrieverError
from promptweave.shots import cache
from promptweave.shots.base import Retriever, Row
from promptweave.shots.text import corpus
from promptweave.shots.tokenize import get_tokenizer


@dataclass
class BM25Index:
    """Posting lists by term: ``docs[indptr[t]:indptr[t+1]]`` hold term ``t``'s documents (ascending)
    and ``weights`` the matching BM25 contributions."""

    vocab: dict[str, int]
    indptr: np.ndarray
    docs: np.ndarray
    weights: np.ndarray
    n_docs: int
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25

    @classmethod
    def build(cls, tokenized: Sequence[Sequence[str]], *, k1: float = 1.5, b: float = 0.75,
              epsilon: float = 0.25) -> "BM25Index":
        vocab: dict[str, int] = {}
        doc_ids: list[int] = []
        term_ids: list[int] = []
        tfs: list[int] = []
        doc_len = np.fromiter((len(t) for t in tokenized), dtype=np.int64, count=len(tokenized))
        for d, toks in enumerate(tokenized):
            counts: dict[int, int] = {}
            for tok in toks:
                tid = vocab.setdefault(tok, len(vocab))  # first-seen order, as the reference's dicts
                counts[tid] = counts.get(tid, 0) + 1
            doc_ids.extend([d] * len(counts))
            term_ids.extend(counts.keys())
            tfs.extend(counts.values())
        n = len(tokenized)
        terms = np.asarray(term_ids, dtype=np.int64)
        order = np.argsort(terms, kind="stable")  # documents stay ascending within each term
        docs = np.asarray(doc_ids, dtype=np.int64)[order].astype(np.int32)
        tf = np.asarray(tfs, dtype=np.int64)[order]
        df = np.bincount(terms, minlength=len(vocab))
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        idf = _idf(df.tolist(), n, epsilon)
        weights = np.empty(0, dtype=np.float64)
        if n and len(vocab):
            avgdl = int(doc_len.sum()) / n
            # Same operations, same order as the reference, so each contribution is bit-identical.
            norm = k1 * (1 - b + b * doc_len / avgdl)
            per_posting_idf = np.repeat(np.asarray(idf, dtype=np.float64), df)
            weights = per_posting_idf * (tf * (k1 + 1) / (tf + norm[docs]))
        return cls(vocab, indptr, docs, weights, n, k1, b, epsilon)

    def query_terms(self, tokens: Sequence[str]) -> list[int]:
        """Term ids of the query tokens found in the index, in query order, repeats kept."""
        get = self.vocab.get
        return [t for t in (get(tok) for tok in tokens) if t is not None]

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for one tokenised query."""
        terms = self.query_terms(tokens)
        if not terms:
            return np.zeros(self.n_docs)
        ip = self.indptr
        if len(terms) == 1:
            idx = self.docs[ip[terms[0]]:ip[terms[0] + 1]]
            w = self.weights[ip[terms[0]]:ip[terms[0] + 1]]
        else:
            idx = np.concatenate([self.docs[ip[t]:ip[t + 1]] for t in terms])
            w = np.concatenate([self.weights[ip[t]:ip[t + 1]] for t in terms])
        # bincount adds weights in input order, i.e. in query-token order per document.
        return np.bincount(idx, weights=w, minlength=self.n_docs)

    def _dense(self) -> dict[int, np.ndarray]:
        """Every document's contribution from each of the most common terms, as a full column (made once).

        A term in most documents costs a scatter of most documents per query as postings; as a column it
        is one vector add. Only terms in at least 1/16 of the documents, within ``DENSE_BUDGET`` bytes."""
        got = self.__dict__.get("_dense_cols")
        if got is None:
            got = {}
            n = self.n_docs
            if n:
                df = np.diff(self.indptr)
                room = DENSE_BUDGET // (8 * n)
                for t in np.argsort(-df, kind="stable")[:room].tolist():
                    if df[t] * 16 < n:
                        break
                    col = np.zeros(n)
                    a, b = self.indptr[t], self.indptr[t + 1]
                    col[self.docs[a:b]] = self.weights[a:b]
                    got[t] = col
            self.__dict__["_dense_cols"] = got
        return got

    def _scores_fast(self, terms: list[int]) -> np.ndarray:
        """:meth:`scores` for term ids, bit for bit: every document gets its contributions added in query
        order, starting from 0.0 (an absent term adds 0.0, which changes nothing)."""
        dense = self._dense()
        s = np.zeros(self.n_docs)
        ip, docs, weights = self.indptr, self.docs, self.weights
        for t in terms:
            col = dense.get(t)
            if col is not None:
                s += col
            else:  # a term's documents are distinct, so a fancy-index add is exact
                a, b = ip[t], ip[t + 1]
                s[docs[a:b]] += weights[a:b]
        return s

    def search(self, queries: Sequence[Sequence[str]], k: int, *, exclude: Sequence[int | None] | None = None,
               threads: int | None = None, tie_break: str = "id") -> list[list[int]]:
        """Top-``k`` document ids per query, best first; ``exclude[i]`` is never returned for query ``i``.

        Equal scores: ``tie_break="id"`` puts the lower id first; ``"reference"`` keeps the order of
        ``np.argsort(scores)[::-1]`` as OpenCompass does (see the module notes). NumPy releases the GIL
        in the heavy steps, so chunks run on ``threads`` threads (default: the CPU count, at most 8);
        the result does not depend on it.
        """
        if tie_break not in TIE_BREAKS:
            raise RetrieverError(f"unknown tie_break {tie_break!r}", field="tie_break", value=tie_break,
                                 expected=" or ".join(repr(t) for t in TIE_BREAKS))
        n_threads = min(8, os.cpu_count() or 1) if threads is None else max(1, threads)
        if n_threads == 1 or len(queries) < 64:
            return self._search(queries, k, exclude, 0, tie_break)
        step = max(16, -(-len(queries) // (n_threads * 4)))
        starts = list(range(0, len(queries), step))
        with ThreadPoolExecutor(n_threads) as pool:
            parts = pool.map(lambda s: self._search(queries[s:s + step], k, exclude, s, tie_break), starts)
            return [ids for part in parts for ids in part]

    def _search(self, queries: Sequence[Sequence[str]], k: int, exclude: Sequence[int | None] | None,
                offset: int, tie_break: str) -> list[list[int]]:
        out = []
        for i, q in enumerate(queries, offset):
            s = self.scores(q) if tie_break == "reference" else self._scores_fast(self.query_terms(q))
            skip = exclude[i] if exclude is not None else None
            if tie_break == "reference":
                # the reference's own call on the untouched array (changing one value could reorder ties)
                best = np.argsort(s)[::-1][:k + (skip is not None)].tolist()
                out.append([d for d in best if d != skip][:k])
                continue
            if skip is not None:
                s[skip] = -np.inf
                out.append(_top_k(s, min(k, self.n_docs - 1)))
            else:
                out.append(_top_k(s, k))
        return out

    def to_arrays(self) -> dict[str, np.ndarray]:
        terms = np.frombuffer(json.dumps(list(self.vocab)).encode("utf-8"), dtype=np.uint8)
        return {"terms": terms, "indptr": self.indptr, "docs": self.docs,
                "weights": self.weights, "meta": np.array([self.n_docs, self.k1, self.b, self.epsilon])}

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray]) -> "BM25Index":
        n, k1, b, eps = a["meta"].tolist()
        vocab = {t: i for i, t in enumerate(json.loads(a["terms"].tobytes().decode("utf-8")))}
        return cls(vocab, a["indptr"], a["docs"], a["weights"], int(n), k1, b, eps)


TIE_BREAKS = ("id", "reference")
DENSE_BUDGET = 64 << 20  # bytes of full columns for the most common terms (see BM25Index._dense)


def _top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first, equal scores by lower index (``text.top_k``'s
    choice, for scores without NaN): one partition finds the k-th value, then only what beats or ties it
    is sorted."""
    n = scores.shape[0]
    k = min(k, n)
    if k <= 0:
        return []
    kth = np.partition(scores, n - k)[n - k]
    above = np.flatnonzero(scores > kth)
    ties = np.flatnonzero(scores == kth)[: k - above.size]
    cand = np.concatenate([above, ties])
    return cand[np.lexsort((cand, -scores[cand]))].tolist()


def _idf(df: list[int], n: int, epsilon: float) -> list[float]:
    # A plain Python loop on purpose: the reference's running sum and math.log, bit for bit.
    idf = [math.log(n - f + 0.5) - math.log(f + 0.5) for f in df]
    if not idf:
        return idf
    total = 0.0
    for v in idf:
        total += v
    eps = epsilon * (total / len(idf))
    return [eps if v < 0 else v for v in idf]


class BM25Retriever(Retriever):
    """Top-``ice_num`` train rows by BM25 over the input columns (OpenCompass's BM25Retriever)."""

    name = "BM25Retriever"

    def __init__(self, *, tokenizer: str = "regex", k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 input_columns: Sequence[str] | None = None, use_cache: bool = True, tie_break: str = "id",
                 **kw: Any) -> None:
        super().__init__(**kw)
        if tie_break not in TIE_BREAKS:
            raise RetrieverError(f"unknown tie_break {tie_break!r}", field="tie_break", value=tie_break,
                                 expected=" or ".join(repr(t) for t in TIE_BREAKS))
        self.tie_break = tie_break
        self.tokenizer = tokenizer
        self.requires: tuple[str, ...] = ("nltk",) if tokenizer == "nltk" else ()  # checked at plan time
        from promptweave.extras import installed

        # without nltk, planning refuses the task (``requires``: PW640 naming the task and the extra) before
        # anything runs, so the tokenizer is only looked up when first used
        self.tokenize = (get_tokenizer(tokenizer) if tokenizer != "nltk" or installed("nltk")
                         else lambda text: get_tokenizer("nltk")(text))
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        self.input_columns = list(input_columns) if input_columns is not None else None
        self.use_cache = use_cache
        self.cache_hit: bool | None = None

    def settings(self) -> dict[str, Any]:
        out = {"type": self.name, "ice_num": self.ice_num, "tokenizer": self.tokenizer, "k1": self.k1,
               "b": self.b, "epsilon": self.epsilon}
        if self.tie_break != "id":
            out["tie_break"] = self.tie_break
        if self.input_columns is not None:
            out["input_columns"] = self.input_columns
        return out

    def index(self, texts: Sequence[str]) -> BM25Index:
        """Build (or load from the cache) the index of ``texts``."""
        key = None
        if self.use_cache:
            key = cache.key_of("bm25", {k: v for k, v in self.settings().items()
                                        if k not in ("ice_num", "input_columns", "tie_break")}, texts)
            got = cache.load_arrays("bm25", key)
            if got is not None:
                self.cache_hit = True
                return BM25Index.from_arrays(got)
        self.cache_hit = False
        idx = BM25Index.build([self.tokenize(t) for t in texts], k1=self.k1, b=self.b, epsilon=self.epsilon)
        if key is not None:
            cache.save_arrays("bm25", key, idx.to_arrays())
        return idx

    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        return self.select_rows(train, test, range(len(test)), same_split=same_split)

    def select_rows(self, train: Sequence[Row], test: Sequence[Row], indices: Sequence[int], *,
                    same_split: bool = False) -> list[list[int]]:
        if same_split and len(train) != len(test):
            raise RetrieverError("same_split needs train and test to be the same rows", field="same_split")
        indices = list(indices)
        if not train:
            return [[] for _ in indices]
        idx = self.index(corpus(train, self.input_columns))
        queries = [self.tokenize(t) for t in corpus([test[i] for i in indices], self.input_columns)]
        return idx.search(queries, self.ice_num, exclude=indices if same_split else None, tie_break=self.tie_break)
