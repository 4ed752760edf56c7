"""OpenCompass's ``XiezhiRetriever``: examples that share a category label with the test row.

Each row has a ``labels`` list. For each of the test row's labels in order, every train row carrying that label is
appended (in train order) until at least ``ice_num`` ids are collected; the first ``ice_num`` are kept. A label no
train row carries adds nothing (the reference raises a KeyError there).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from promptweave.errors import RetrieverError
from promptweave.shots.base import Retriever, Row


class XiezhiRetriever(Retriever):
    name = "XiezhiRetriever"

    def __init__(self, *, labels_column: str = "labels", **kw: Any) -> None:
        kw.pop("input_columns", None)
        kw.pop("output_column", None)
        super().__init__(**kw)
        self.labels_column = labels_column

    def _labels(self, row: Row, where: str) -> list[Any]:
        got = row.get(self.labels_column)
        if not isinstance(got, (list, tuple)):
            raise RetrieverError(f"XiezhiRetriever needs a '{self.labels_column}' list in every row",
                                 field=f"{where}.{self.labels_column}", value=got)
        return list(got)

    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        by_label: dict[Any, list[int]] = {}
        for i, row in enumerate(train):
            for label in self._labels(row, f"train[{i}]"):
                by_label.setdefault(label, []).append(i)
        out = []
        for k, row in enumerate(test):
            ids: list[int] = []
            for label in self._labels(row, f"test[{k}]"):
                if len(ids) >= self.ice_num:
                    break
                ids += by_label.get(label, [])
            out.append(ids[:self.ice_num])
        return out
