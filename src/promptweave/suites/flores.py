"""FLORES (first 100 sentences): the reply cut to its first line before BLEU, and for Chinese targets the line
with runs of whitespace made single spaces and then segmented into words by jieba (BLEU's tokens are words, which
Chinese text does not mark). The loader is ``FloresFirst100Dataset`` in data/loaders/plain_sets.py."""
from __future__ import annotations

import re


def flores_postprocess(text: str) -> str:
    return text.strip().split("\n")[0]


def flores_postprocess_chinese(text: str) -> str:
    import jieba

    line = re.sub(r"\s+", " ", flores_postprocess(text)).strip()
    return " ".join(jieba.cut(line))


flores_postprocess_chinese.requires = ("jieba",)  # type: ignore[attr-defined]  # checked at plan time

POSTPROCESSORS = {"flores": flores_postprocess, "flores-chinese": flores_postprocess_chinese}
