"""LCSTS (Chinese short-text summaries): its loader and postprocessor."""
from __future__ import annotations

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    rows,
)
from promptweave.data.sources import text_lines


def lcsts(ctx: LoadContext, path: str) -> Splits:
    """``test.src.txt`` and ``test.tgt.txt``, line by line: content and abst (stripped)."""
    root = ctx.find(path)
    src = text_lines(ctx.member(root, "test.src.txt"))
    tgt = text_lines(ctx.member(root, "test.tgt.txt"))
    return rows(((f"line {i + 1}", {"content": s.strip(), "abst": t.strip()})
                 for i, (s, t) in enumerate(zip(src, tgt))), root / "test.src.txt")



def lcsts_postprocess(text: str) -> str:
    text = text.strip().split("\n")[0].replace("своей", "").strip()
    if text.startswith("1. "):
        text = text.replace("1. ", "")
    if text.startswith("- "):
        text = text.replace("- ", "")
    return text.strip("“，。！”")


LOADERS = {
    "LCSTSDataset": lcsts,
}


POSTPROCESSORS = {
    "lcsts_postprocess": lcsts_postprocess,
}
