"""Retrievers that need no scoring: zero-shot, fixed ids, seeded random, sliding window."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from promptweave.errors import RetrieverError
from promptweave.shots.base import Retriever, Row


class ZeroRetriever(Retriever):
    """No in-context examples."""

    name = "ZeroRetriever"
    default_eos = ""

    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        return [[] for _ in range(len(test))]


class FixKRetriever(Retriever):
    """The same ``fix_id_list`` examples for every test row."""

    name = "FixKRetriever"

    def __init__(self, fix_id_list: Sequence[int] | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        if fix_id_list is None:
            raise RetrieverError("FixKRetriever needs fix_id_list", field="fix_id_list",
                                 expected="a list of train row indices")
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in fix_id_list):
            raise RetrieverError("fix_id_list must hold integers", field="fix_id_list", value=list(fix_id_list))
        self.fix_id_list = list(fix_id_list)

    def settings(self) -> dict[str, Any]:
        return {"type": self.name, "fix_id_list": self.fix_id_list}

    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        for i in self.fix_id_list:
            if not 0 <= i < len(train):
                raise RetrieverError(f"fix_id_list id {i} is outside the train split of {len(train)} rows",
                                     field="fix_id_list", value=i)
        return [list(self.fix_id_list) for _ in range(len(test))]


class RandomRetriever(Retriever):
    """``ice_num`` distinct random examples per test row.

    Draws exactly as the reference does (one legacy NumPy RandomState seeded
    once, ``choice(n, ice_num, replace=False)`` per row), so the same seed gives
    the same ids.
    """

    name = "RandomRetriever"

    def __init__(self, seed: int = 43, **kw: Any) -> None:
        super().__init__(**kw)
        self.seed = seed

    def settings(self) -> dict[str, Any]:
        return {"type": self.name, "ice_num": self.ice_num, "seed": self.seed}

    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        if self.ice_num > len(train):
            raise RetrieverError(f"ice_num {self.ice_num} exceeds the {len(train)} train rows", field="ice_num",
                                 value=self.ice_num)
        rng = np.random.RandomState(self.seed)
        return [rng.choice(len(train), self.ice_num, replace=False).tolist() for _ in range(len(test))]


class SlidingKRetriever(Retriever):
    """The ``k`` train rows just before the test row's position; the first rows wrap to the end.

    As the reference's SlidingWindowRetriever: test row ``i`` gets train rows
    ``i-k .. i-1``, and for ``i < k`` the missing ones are the last rows of the train
    split, placed first. The window size is ``k`` (the reference's required argument;
    ``ice_num`` when ``k`` is not given). Positions past the train split wrap around
    (the reference would index out of range); a window never repeats a row, and with
    ``same_split`` it never holds the test row itself.
    """

    name = "SlidingWindowRetriever"

    def __init__(self, k: int | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        if k is None:
            k = self.ice_num
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise RetrieverError("k must be a non-negative integer", field="k", value=k)
        self.k = k

    def settings(self) -> dict[str, Any]:
        return {"type": self.name, "k": self.k}

    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        n = len(train)
        if n == 0:
            return [[] for _ in range(len(test))]
        k = min(self.k, n)
        out = []
        for i in range(len(test)):
            ids = [(i - j) % n for j in range(k, 0, -1)]
            if same_split:
                ids = [j for j in ids if j != i]
            out.append(ids)
        return out
