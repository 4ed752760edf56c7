"""Social IQa: its loaders (the three reference classes' row shapes)."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, need
from promptweave.data.loaders.choice import labelled_splits


def siqa(ctx: LoadContext, path: str) -> Splits:
    """``{train,dev}.jsonl`` with labels one per line in ``{train,dev}-labels.lst`` (dev -> validation)."""
    return labelled_splits(ctx, path, lambda f, loc, row, label: {**row, "label": label})


def siqa_v2(ctx: LoadContext, path: str) -> Splits:
    """As siqaDataset, the label as a letter (1-3 -> A-C) and ``all_labels`` listing the lettered candidates."""

    def convert(f, loc, row, label):
        need(ctx, row, ("answerA", "answerB", "answerC"), file=f, where=loc)
        if not 1 <= label <= 3:
            raise ctx.fail("a SIQA label must be 1, 2 or 3", file=f, where=loc, value=label)
        row["all_labels"] = {"candidates": [[f"{k}. {row['answer' + k]}", k, row["answer" + k]] for k in "ABC"],
                             "label": label - 1}
        row["label"] = " ABC"[label]
        return row

    return labelled_splits(ctx, path, convert)


def siqa_v3(ctx: LoadContext, path: str) -> Splits:
    """As siqaDataset, ``answerA/B/C`` renamed ``A/B/C`` (moved after the other fields, as the reference pops and
    re-adds them) and ``answer`` the label as a letter (``'ABC'[label - 1]``, the reference's indexing)."""

    def convert(f, loc, row, label):
        need(ctx, row, ("answerA", "answerB", "answerC"), file=f, where=loc)
        if not -2 <= label <= 3:
            raise ctx.fail("a SIQA label must be 1, 2 or 3", file=f, where=loc, value=label)
        for k in "ABC":
            row[k] = row.pop("answer" + k)
        row["answer"] = "ABC"[label - 1]
        return row

    return labelled_splits(ctx, path, convert)


LOADERS = {
    "siqaDataset": siqa,
    "siqaDataset_V2": siqa_v2,
    "SiqaDatasetV3": siqa_v3,
}
