"""DocVQA (questions on document images, AISBench's TSV layout): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.mm_tsv import vqa_splits


def docvqa(ctx: LoadContext, path: str) -> Splits:
    """DocVQA TSV: images then the question with the single-word instruction; ``answer`` as stored."""
    return vqa_splits(ctx, path, "DocVQA_images")


LOADERS = {
    "DocVQADataset": docvqa,
}
