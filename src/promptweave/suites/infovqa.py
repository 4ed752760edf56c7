"""InfoVQA (questions on infographics, AISBench's TSV layout): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.mm_tsv import vqa_splits


def infovqa(ctx: LoadContext, path: str) -> Splits:
    """InfoVQA TSV, the same shape as DocVQA."""
    return vqa_splits(ctx, path, "InfoVQA_images")


LOADERS = {
    "InfoVQADataset": infovqa,
}
