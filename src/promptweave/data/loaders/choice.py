"""Multiple-choice layouts: JSONL question files (ARC, RACE, MathBench, WikiBench, OpenBookQA, ChemBench, Earth
Silver) and the helpers the multiple-choice suites share (MMLU, C-Eval, GPQA, PIQA, SIQA ... are in ``suites/``)."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    jsonl,
    need,
    rows,
)
from promptweave.data.sources import Split

ABCD = "ABCD"


def _labelled(ctx: LoadContext, root: Path, stem: str) -> tuple[Path, list[tuple[str, dict[str, Any], int]]]:
    """``<stem>.jsonl`` beside ``<stem>-labels.lst`` (one integer label per line), zipped."""
    data_f, label_f = ctx.members(root, f"{stem}.jsonl", f"{stem}-labels.lst")
    data = jsonl(data_f)
    labels = [ln for ln in _lines(label_f) if ln.strip()]
    if len(data) != len(labels):
        raise ctx.fail(f"{len(data)} questions but {len(labels)} labels", file=label_f)
    out = []
    for (loc, item), label in zip(data, labels):
        try:
            value = int(label.strip())
        except ValueError:
            raise ctx.fail("a label must be an integer", file=label_f, value=label) from None
        out.append((loc, dict(need(ctx, item, (), file=data_f, where=loc)), value))
    return data_f, out


def labelled_splits(ctx: LoadContext, path: str, convert) -> Splits:
    """train/dev ``.jsonl`` + ``-labels.lst`` pairs (dev -> validation), each row made by ``convert(f, loc, row, label)``."""
    names = [f"{stem}{end}" for stem in ("train", "dev") for end in (".jsonl", "-labels.lst")]
    root = ctx.files(path, names)[0].parent  # all four named at once when some are missing
    out = {}
    for split, stem in (("train", "train"), ("validation", "dev")):
        f, items = _labelled(ctx, root, stem)
        out[split] = rows([(loc, convert(f, loc, row, label)) for loc, row, label in items], f)
    return out


def _lines(f: Path) -> list[str]:
    from promptweave.data.sources import text_lines

    return text_lines(f)


def circular_rows(ctx: LoadContext, entry: Any, n: int, f: Path, loc: str) -> list[tuple[str, dict[str, Any]]]:
    need(ctx, entry, ("options",), file=f, where=loc)
    out = []
    for pattern in ("ABCD", "BCDA", "CDAB", "DABC"):
        line = copy.deepcopy(entry)
        line["options"] = [entry["options"][ord(pattern[i]) - ord("A")] for i in range(4)]
        letter = {pattern[i]: ABCD[i] for i in range(4)}.get(entry["answer"])
        if letter is None:
            raise ctx.fail("a circular single-choice answer must be one of A-D", file=f, where=loc,
                           value=entry["answer"])
        line["answer"] = f"{n}--{letter}--{pattern}"
        line["question"] = entry["question"].strip() + "\n" + numbered_options(line["options"])
        out.append((f"{loc} ({pattern})", line))
    return out


def numbered_options(options: list[Any]) -> str:
    return "".join(f"{chr(ord('A') + i)}. {opt}\n" for i, opt in enumerate(options))


__all__ = [
    "Split",
]
