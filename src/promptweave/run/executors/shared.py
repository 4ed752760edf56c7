"""What the Ray driver computes once per dataset and shares through the object store."""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from promptweave.shots.base import Retriever


class PrecomputedRetriever(Retriever):
    """A dataset's retrieval result (example ids per test row), searched once on the driver.

    It stands in for the dataset's own retriever on the workers, keeping that
    retriever's settings (separator, eos token, ice_num), so every shard builds the
    prompts a local run would without rebuilding the index.
    """

    def __init__(self, original: Retriever, ids: Sequence[Sequence[int]]) -> None:  # noqa: D107
        self.__dict__.update(original.__dict__)
        self.name = original.name
        self.default_eos = original.default_eos
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
    return dataclasses.replace(ds, retriever=PrecomputedRetriever(ds.retriever, ids))
