"""Retrieving for a few rows gives the same ids as retrieving for the whole split."""
import pytest

from promptweave.shots import build_retriever

ROWS = [{"q": f"the {w} {v} question about item {i % 7}", "a": str(i)}
        for i, (w, v) in enumerate([("red", "small"), ("blue", "large"), ("red", "large"), ("green", "tiny"),
                                    ("blue", "small"), ("red", "tiny"), ("green", "large"), ("blue", "tiny"),
                                    ("green", "small"), ("red", "huge")])]


@pytest.mark.parametrize("cfg", [{"type": "BM25Retriever", "ice_num": 3}])
@pytest.mark.parametrize("same_split", [True, False])
def test_select_rows_matches_full_select(cfg, same_split):
    r = build_retriever({**cfg, "input_columns": ["q"], "output_column": "a"})
    test = ROWS if same_split else [{"q": "a red small question", "a": "x"}, {"q": "green tiny item 3", "a": "y"},
                                    {"q": "blue", "a": "z"}]
    full = r.select(ROWS, test, same_split=same_split)
    some = [2, 0] if not same_split else [7, 2]
    assert r.select_rows(ROWS, test, some, same_split=same_split) == [full[i] for i in some]
    if same_split:
        assert all(i not in full[i] for i in range(len(ROWS)))


def test_topk_select_rows_matches_full_select(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    r = build_retriever({"type": "TopkRetriever", "ice_num": 2, "input_columns": ["q"], "output_column": "a"})
    full = r.select(ROWS, ROWS, same_split=True)
    assert r.select_rows(ROWS, ROWS, [3, 8], same_split=True) == [full[3], full[8]]
