"""WinoGrande: its loaders (the three reference classes' row shapes)."""
from __future__ import annotations

from pathlib import Path

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.sources import Split


def _winogrande(ctx: LoadContext, path: str, *, letter: bool) -> Splits:
    return _winogrande_file(ctx, ctx.member(ctx.find(path), "dev.jsonl"), letter=letter)


def _winogrande_file(ctx: LoadContext, f: Path, *, letter: bool) -> Split:
    items = []
    for loc, line in jsonl(f):
        need(ctx, line, ("sentence", "option1", "option2", "answer"), file=f, where=loc)
        prompt = line["sentence"]
        answer = line["answer"]
        if letter:
            answer = " AB"[int(answer)] if answer != "" else "NULL"
        items.append((loc, {"prompt": prompt, "only_option1": line["option1"], "only_option2": line["option2"],
                            "opt1": prompt.replace("_", line["option1"]), "opt2": prompt.replace("_", line["option2"]),
                            "answer": answer, "cont": prompt.split("_")[1]}))
    return rows(items, f)


def winogrande(ctx: LoadContext, path: str) -> Splits:
    """``<path>/dev.jsonl``: the sentence with its blank filled by each option (opt1 / opt2), the text after the
    blank (cont), the answer as stored."""
    return _winogrande(ctx, path, letter=False)


def winogrande_v2(ctx: LoadContext, path: str) -> Splits:
    """As WinograndeDataset, the answer 1 / 2 as A / B ('' -> NULL)."""
    return _winogrande(ctx, path, letter=True)


def winogrande_v3(ctx: LoadContext, path: str) -> Splits:
    """As WinograndeDatasetV2 over two splits: ``train_xs.jsonl`` (in-context examples) and ``dev.jsonl``."""
    splits = ("train_xs", "dev")
    return {split: _winogrande_file(ctx, f, letter=True)
            for split, f in zip(splits, ctx.files(path, [f"{s}.jsonl" for s in splits]))}


LOADERS = {
    "WinograndeDataset": winogrande,
    "WinograndeDatasetV2": winogrande_v2,
    "WinograndeDatasetV3": winogrande_v3,
}
