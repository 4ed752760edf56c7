"""The text a retriever compares: the reference joins a row's input columns with spaces."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from promptweave.errors import RetrieverError


def row_text(row: Mapping[str, Any], columns: Sequence[str] | None) -> str:
    if columns is None:
        return " ".join(str(v) for v in row.values())
    try:
        return " ".join(str(row[c]) for c in columns)
    except KeyError as exc:
        raise RetrieverError(f"row has no input column {exc.args[0]!r}", field="input_columns",
                             value=list(row)) from None


def corpus(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None) -> list[str]:
    return [row_text(r, columns) for r in rows]


def top_k(scores, k: int):
    """Indices of the ``k`` highest scores, best first, ties broken by the lower index."""
    import numpy as np

    n = scores.shape[0]
    k = min(k, n)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    # Sparse scores (BM25) are mostly zero, and selection over many equal values is slow:
    # select among the positive scores when there are enough of them.
    pos = np.flatnonzero(scores > 0)
    ids = pos if pos.size >= k else np.arange(n)
    vals = scores[ids]
    m = ids.size
    if k < m:
        kth = vals[np.argpartition(vals, m - k)[m - k]]
        # argpartition's own picks among ties at the k-th score are arbitrary: take the lowest ids.
        above = ids[vals > kth]
        ties = ids[vals == kth][: k - above.size]
        cand = np.concatenate([above, ties])
    else:
        cand = ids
    order = np.lexsort((cand, -scores[cand]))
    return cand[order]
