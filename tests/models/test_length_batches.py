"""Batches by token length: every request once, longest first, within batch_size and the token budget."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from promptweave.models.length_batches import batching_note, length_batches, padded_positions


def test_longest_first_ties_in_given_order_and_batch_size() -> None:
    assert length_batches([3, 9, 3, 5, 9], 2) == [[1, 4], [3, 0], [2]]


def test_file_order_when_not_sorted() -> None:
    assert length_batches([3, 9, 3, 5, 9], 2, sort=False) == [[0, 1], [2, 3], [4]]


def test_token_budget_splits_long_batches_and_a_long_request_goes_alone() -> None:
    # widths include the tokens to generate: (10 + 2) x 2 rows = 24 > 20
    assert length_batches([10, 10, 4, 4, 4], 8, 20, extra=2) == [[0], [1], [2, 3, 4]]
    assert length_batches([50, 1], 8, 20) == [[0], [1]]  # over budget on its own: still sent


def test_weights_count_against_batch_size() -> None:
    assert length_batches([5, 4, 3], 8, weights=[4, 4, 4]) == [[0, 1], [2]]


def test_sorting_pads_less_than_file_order() -> None:
    lengths = [400, 20, 380, 25, 390, 30, 370, 22]
    assert padded_positions(lengths, length_batches(lengths, 2)) == 2 * (400 + 380 + 30 + 22)
    assert padded_positions(lengths, length_batches(lengths, 2, sort=False)) == 2 * (400 + 380 + 390 + 370)


def test_note_says_how_batches_are_formed() -> None:
    assert "sorted by token length" in batching_note(16) and "16 rows" in batching_note(16)
    assert "4096 padded tokens" in batching_note(16, 4096)


@given(st.lists(st.integers(1, 500), max_size=60), st.integers(1, 9), st.one_of(st.none(), st.integers(1, 3000)),
       st.integers(0, 40), st.booleans())
def test_every_request_once_within_limits(lengths, bs, budget, extra, sort) -> None:
    batches = length_batches(lengths, bs, budget, extra=extra, sort=sort)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    for b in batches:
        assert 1 <= len(b) <= bs
        if budget is not None and len(b) > 1:
            assert len(b) * (max(lengths[i] for i in b) + extra) <= budget
    if sort:
        assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)
    else:
        assert flat == list(range(len(lengths)))
