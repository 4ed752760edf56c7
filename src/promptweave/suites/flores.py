"""FLORES (first 100 sentences): the reply cut to its first line before BLEU, and for Chinese targets the line
with runs of whitespace made single spaces and then segmented into words by jieba (BLEU's tokens are words, which
Chinese text does not mark); its loader (``FloresFirst100Dataset``) and BLEU with FLORES-200 tokens."""
from __future__ import annotations

import re
from pathlib import Path

from promptweave.data.loaders.base import LoadContext, Splits, regular
from promptweave.data.sources import Split, text_lines
from promptweave.evaluate.evaluators import BleuEvaluator


def flores_postprocess(text: str) -> str:
    return text.strip().split("\n")[0]


def flores_postprocess_chinese(text: str) -> str:
    import jieba

    line = re.sub(r"\s+", " ", flores_postprocess(text)).strip()
    return " ".join(jieba.cut(line))


flores_postprocess_chinese.requires = ("jieba",)  # type: ignore[attr-defined]  # checked at plan time


# -- FLORES, first 100 sentences per language: one sentence per line, line i of each file aligned ---------------


def _flores_split(ctx: LoadContext, root: Path, split: str, src: str, tgt: str) -> Split:
    src_f, tgt_f = root / split / f"{src}.{split}", root / split / f"{tgt}.{split}"
    a, b = text_lines(regular(src_f)), text_lines(regular(tgt_f))
    if len(a) != len(b):
        raise ctx.fail(f"{src_f.name} has {len(a)} lines but {tgt_f.name} has {len(b)}; they must align",
                       file=tgt_f, where=split)
    rows = [{f"sentence_{src}": x.strip(), f"sentence_{tgt}": y.strip()} for x, y in zip(a, b)]
    return Split(rows, str(src_f), [f"line {i}" for i in range(1, len(rows) + 1)])


def flores(ctx: LoadContext, path: str, name: str) -> Splits:
    """``name`` is ``<src>-<tgt>`` (FLORES codes); dev and devtest splits from ``<path>/<split>/<lang>.<split>``."""
    langs = name.split("-") if isinstance(name, str) else []
    if len(langs) != 2 or not all(langs):
        raise ctx.fail("name must be '<source>-<target>' language codes, e.g. 'eng_Latn-zho_Hans'", where="name",
                       value=name)
    root = ctx.find(path)
    return {s: _flores_split(ctx, root, s, langs[0], langs[1]) for s in ("dev", "devtest")}


class BleuFloresEvaluator(BleuEvaluator):
    name = "BleuFloresEvaluator"
    tokenize = "flores200"


POSTPROCESSORS = {"flores": flores_postprocess, "flores-chinese": flores_postprocess_chinese}
LOADERS = {
    "FloresFirst100Dataset": flores,
}
EVALUATORS = {
    "BleuFloresEvaluator": BleuFloresEvaluator,
}
