"""Question answering: CHARM and BBEH task JSON, ReCoRD, and the task-JSON / TSV / JSONL readers the QA suites share
(BBH, TriviaQA, Natural Questions, DROP, MultiRC, CMRC / DRCD are in ``suites/``)."""
from __future__ import annotations

from pathlib import Path

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    csv_records,
    json_file,
    jsonl,
    need,
    python_literal,
    rows,
)


def examples(ctx: LoadContext, f: Path) -> Splits:
    data = json_file(f)
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        raise ctx.fail("expected a JSON object with an 'examples' list", file=f)
    items = []
    for i, ex in enumerate(data["examples"]):
        items.append((f"examples[{i}]", dict(need(ctx, ex, (), file=f, where=f"examples[{i}]"))))
    return rows(items, f)


def qa_tsv(ctx: LoadContext, path: str, pattern: str, splits: tuple[str, str], first_in: str) -> Splits:
    out = {}
    for split, f in zip(splits, ctx.files(path, [pattern.format(split=s) for s in splits])):
        items = []
        for loc, rec in csv_records(f, delimiter="\t"):
            if len(rec) != 2:
                raise ctx.fail("expected two tab-separated fields (question, answers)", file=f, where=loc,
                               value=len(rec))
            answers = python_literal(rec[1], file=f, where=loc)
            if split == first_in:
                answers = answers[0]
            items.append((loc, {"question": rec[0], "answer": answers}))
        out[split] = rows(items, f)
    return out


def qa_jsonl(ctx: LoadContext, path: str, pattern: str, first_in: str | None) -> Splits:
    splits = ("validation", "train")
    out = {}
    for split, f in zip(splits, ctx.files(path, [pattern.format(split=s) for s in splits])):
        items = []
        for loc, doc in jsonl(f):
            row = dict(need(ctx, doc, ("answer",) if split == first_in else (), file=f, where=loc))
            if split == first_in:
                row["answer"] = row["answer"][0]
            items.append((loc, row))
        out[split] = rows(items, f)
    return out
