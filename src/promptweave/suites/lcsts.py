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
    src_f, tgt_f = ctx.files(path, ["test.src.txt", "test.tgt.txt"])
    src, tgt = text_lines(src_f), text_lines(tgt_f)
    return rows(((f"line {i + 1}", {"content": s.strip(), "abst": t.strip()})
                 for i, (s, t) in enumerate(zip(src, tgt))), src_f)



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
