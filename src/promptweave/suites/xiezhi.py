"""Xiezhi (domain knowledge multiple choice): its loader and OpenCompass's ``XiezhiRetriever``, which picks
examples that share a category label with the test row.

Each row has a ``labels`` list. For each of the test row's labels in order, every train row carrying that label is
appended (in train order) until at least ``ice_num`` ids are collected; the first ``ice_num`` are kept. A label no
train row carries adds nothing (the reference raises a KeyError there).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need
from promptweave.data.loaders.classify import table
from promptweave.data.sources import Split
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


# -- Xiezhi: one JSON object per line, four options in one newline-separated string ----------------------------


def _xiezhi_file(ctx: LoadContext, f: Path, chinese: bool) -> Split:
    label_key = "labels" if chinese else "label"
    items = []
    for loc, r in jsonl(f):
        need(ctx, r, ("question", "options", "answer", label_key), file=f, where=loc)
        options = r["options"]
        if not isinstance(options, str):
            raise ctx.fail("options must be one string, an option per line", file=f, where=loc, value=options)
        if options.endswith('"\n'):  # some records end in a stray quote and newline; the reference cuts both
            options = options[:-2]
        parts = options.split("\n")
        if len(parts) != 4:  # the reference keeps only four-option questions
            continue
        if r["answer"] not in parts:
            raise ctx.fail("answer must be one of the four options", file=f, where=loc, value=r["answer"])
        labels = r[label_key]
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise ctx.fail(f"{label_key} must be a list of category names", file=f, where=loc, value=labels)
        items.append((loc, {
            "question": r["question"],
            "A": parts[0], "B": parts[1], "C": parts[2], "D": parts[3],
            "labels": sorted(labels, key=len, reverse=True),  # longest (finest) category first, as XiezhiRetriever reads
            "answer": "ABCD"[parts.index(r["answer"])],
        }))
    return table(items, f)


def xiezhi(ctx: LoadContext, path: str, name: str) -> Splits:
    """``<path>/<name>/xiezhi.v1.json`` as test; the Chinese or English training set (``xiezhi_train_chn`` /
    ``xiezhi_train_eng``, by whether ``name`` contains ``chn``) as train."""
    if not isinstance(name, str) or not name:
        raise ctx.fail("XiezhiDataset needs name (a subset folder such as 'xiezhi_spec_chn')", where="name",
                       value=name)
    root = ctx.find(path, local_mode=True)
    chinese = "chn" in name
    train = root / ("xiezhi_train_chn" if chinese else "xiezhi_train_eng") / "xiezhi.v1.json"
    return {"train": _xiezhi_file(ctx, train, chinese), "test": _xiezhi_file(ctx, root / name / "xiezhi.v1.json",
                                                                             chinese)}


LOADERS = {
    "XiezhiDataset": xiezhi,
}
