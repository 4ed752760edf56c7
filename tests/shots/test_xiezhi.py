"""XiezhiRetriever: examples sharing a category label with the test row, in the reference's order."""
from __future__ import annotations

import pytest

from promptweave.errors import RetrieverError
from promptweave.shots import build_retriever

TRAIN = [{"labels": ["bio"]}, {"labels": ["math", "bio"]}, {"labels": ["law"]}, {"labels": ["math"]}]


def test_examples_share_a_label_in_label_then_train_order() -> None:
    r = build_retriever({"type": "XiezhiRetriever", "ice_num": 3})
    test = [{"labels": ["math", "bio"]}, {"labels": ["law", "art"]}, {"labels": ["art"]}]
    # math gives [1, 3] (< 3 ids), so bio adds [0, 1]; the first three are kept
    assert r.select(TRAIN, test) == [[1, 3, 0], [2], []]


def test_rows_need_a_labels_list() -> None:
    with pytest.raises(RetrieverError, match=r"test\[0\]\.labels"):
        build_retriever({"type": "XiezhiRetriever"}).select(TRAIN, [{"labels": "bio"}])
