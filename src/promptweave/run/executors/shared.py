"""What the Ray driver computes once per dataset and shares through the object store."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from promptweave.shots.base import Retriever


class PrecomputedRetriever(Retriever):
    """A dataset's retrieval result (example ids per test row), searched once on the driver.

    It stands in for the dataset's own retriever on the workers, keeping that
    retriever's settings (separator, eos token, ice_num), so every shard builds the
    prompts a local run would without rebuilding the index.
    """

    def __init__(self, original: Retriever, ids: Sequence[Sequence[int]]) -> None:
        self.__dict__.update(original.__dict__)
        self.name = original.name  # type: ignore[misc]  # the original's, which may be its own instance value
        self.default_eos = original.default_eos  # type: ignore[misc]
        self._settings = original.settings()
        self._ids = [list(x) for x in ids]

    def select(self, train: Sequence[Any], test: Sequence[Any], *, same_split: bool = False) -> list[list[int]]:
        return [list(x) for x in self._ids[:len(test)]]

    def select_rows(self, train: Sequence[Any], test: Sequence[Any], indices: Sequence[int], *,
                    same_split: bool = False) -> list[list[int]]:
        return [list(self._ids[i]) for i in indices]

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)


def with_shared_index(ds: Any) -> Any:
    """``ds`` with its retriever's choices for every test row computed now (once per dataset)."""
    same = ds.same_split
    same = ds.train is ds.test if same is None else same
    ids = ds.retriever.select(ds.train, ds.test, same_split=same)
    return dataclasses.replace(ds, retriever=PrecomputedRetriever(ds.retriever, ids), same_split=same)


class BlockRows(Sequence):
    """A test split held in the object store as blocks of rows; a worker fetches only the blocks it reads.

    At 100 nodes, every node fetching every whole dataset would move (nodes × data) bytes;
    fetching blocks moves about the rows each node actually runs (docs/scale-out.md).
    """

    def __init__(self, refs: list, block: int, n: int) -> None:
        self.refs = refs
        self.block = block
        self.n = n
        self._got: dict[int, list] = {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.n))]
        if k < 0:
            k += self.n
        if not 0 <= k < self.n:
            raise IndexError(k)
        b = k // self.block
        if b not in self._got:
            import ray

            if len(self._got) >= 8:  # a worker moves through a dataset shard by shard: keep a few blocks
                self._got.pop(next(iter(self._got)))
            self._got[b] = ray.get(self.refs[b])
        return self._got[b][k - b * self.block]

    def __getstate__(self) -> dict:
        return {"refs": self.refs, "block": self.block, "n": self.n}

    def __setstate__(self, state: dict) -> None:
        BlockRows.__init__(self, state["refs"], state["block"], state["n"])


def in_blocks(ds: Any, put: Any, block: int) -> Any:
    """``ds`` with its test rows put in the object store in blocks (the train split, for examples, stays whole)."""
    if ds.train is ds.test:  # examples come from the test split itself: it travels whole once
        return ds
    rows = list(ds.test)
    refs = [put(rows[a:a + block]) for a in range(0, len(rows), block)]
    return dataclasses.replace(ds, test=BlockRows(refs, block, len(rows)))
