import pytest

from promptweave.errors import RetrieverError
from promptweave.shots import build_retriever


def test_sliding_window_matches_the_reference_order():
    train = [{"x": i} for i in range(6)]
    r = build_retriever({"type": "SlidingWindowRetriever", "k": 3})
    got = r.select(train, train)
    # i < k: previous rows padded in front with the last rows of the split.
    assert got[0] == [3, 4, 5] and got[1] == [4, 5, 0] and got[2] == [5, 0, 1]
    assert got[3] == [0, 1, 2] and got[5] == [2, 3, 4]
    assert r.settings() == {"type": "SlidingWindowRetriever", "k": 3}


def test_sliding_window_same_split_and_small_train():
    train = [{"x": i} for i in range(3)]
    r = build_retriever({"type": "SlidingWindowRetriever", "k": 5})
    got = r.select(train, train, same_split=True)
    assert all(i not in ids and len(set(ids)) == len(ids) for i, ids in enumerate(got))
    assert r.select([], train) == [[], [], []]
    with pytest.raises(RetrieverError):
        build_retriever({"type": "SlidingWindowRetriever", "k": -1})


def test_registry_knows_every_retriever_name():
    from promptweave.shots.registry import RETRIEVERS, retriever_class

    for name in ("BM25Retriever", "TopkRetriever", "VotekRetriever", "DPPRetriever", "MDLRetriever",
                 "opencompass.openicl.icl_retriever.BM25Retriever"):
        assert retriever_class(name).name in RETRIEVERS
