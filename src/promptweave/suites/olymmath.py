"""OlymMATH (olympiad maths, English and Chinese): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.hub import hf_dataset


def olymmath(ctx: LoadContext, path: str, subset: str) -> Splits:
    """``load_dataset(path, subset)`` from a local folder or the local Hugging Face cache."""
    return hf_dataset(ctx, path=path, name=subset)


LOADERS = {
    "OlymMATHDataset": olymmath,
}
