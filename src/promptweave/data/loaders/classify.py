"""Short-form classification and multiple-choice sets whose reference loader only reads rows and relabels a gold
column: AdvGLUE, SuperGLUE AX and Anthropic's model-written evals (AI risk, persona, sycophancy), and the helpers the
classification suites share (ANLI, TNEWS, WSC, StoryCloze ... are in ``suites/``).

Where the reference builds a ``datasets.Dataset`` from a list of dicts, its columns are the first row's keys: a key
only later rows hold is dropped and a key a later row lacks reads as None. :func:`table` keeps that rule so that
templates see the same columns.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need
from promptweave.data.sources import Split


def table(items: Iterable[tuple[str, Mapping[str, Any]]], file: Path | str) -> Split:
    """Rows as ``Dataset.from_list`` keeps them: the first row's keys, in its order, for every row."""
    items = list(items)
    keys = list(items[0][1]) if items else []
    return Split([{k: r.get(k) for k in keys} for _, r in items], str(file), [loc for loc, _ in items])


def json_records(ctx: LoadContext, f: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(loc, dict(need(ctx, r, (), file=f, where=loc))) for loc, r in jsonl(f)]


def mapped(ctx: LoadContext, f: Path, key: str, mapping: Mapping[Any, str], loc: str, value: Any) -> str:
    try:
        return mapping[value]
    except (KeyError, TypeError):
        raise ctx.fail(f"{key} must be one of " + ", ".join(map(repr, mapping)), file=f, where=loc,
                       value=value) from None


def each_row(got: Splits, fn) -> Splits:
    def one(part: Split) -> Split:
        return Split([fn(dict(r), part.locate(i)) for i, r in enumerate(part.rows)], part.file, list(part.where))

    return one(got) if isinstance(got, Split) else {k: one(v) for k, v in got.items()}
