"""MGSM (multilingual grade-school maths): its loader and answer postprocessor."""
from __future__ import annotations

import re

from promptweave.data.loaders.base import LoadContext, Splits, rows
from promptweave.evaluate.postprocess import MGSM_ANSWER_PREFIX


def mgsm(ctx: LoadContext, path: str) -> Splits:
    """A TSV-like text file of ``question<TAB>answer`` lines."""
    from promptweave.data.sources import text_lines

    f = ctx.find(path, local_mode=True)
    items = []
    for i, line in enumerate(text_lines(f), 1):
        parts = line.strip().split("\t")
        if len(parts) != 2:
            raise ctx.fail("expected question TAB answer", file=f, where=f"line {i}", value=len(parts))
        items.append((f"line {i}", {"question": parts[0], "answer": parts[1]}))
    return rows(items, f)


def mgsm_postprocess(text: str, lang: str = "en") -> str:
    prefix = MGSM_ANSWER_PREFIX[lang]
    if prefix not in text:
        return ""
    numbers = re.findall(r"\d+\.?\d*", text.split(prefix)[-1].strip().replace(",", ""))
    return numbers[-1].rstrip(".") if numbers else ""


LOADERS = {
    "MGSMSDataset": mgsm,
}
POSTPROCESSORS = {
    "mgsm_postprocess": mgsm_postprocess,
}
