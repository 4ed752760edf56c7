"""Earth-Silver (earth-science multiple choice): its loader."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.hub import read_folder


def earth_silver_mcq(ctx: LoadContext, path: str, prompt_mode: str = "zero-shot", **_: Any) -> Splits:
    """The ``multiple_choice`` split of the Earth-Silver dataset (question, answer kept as they are)."""
    if prompt_mode != "zero-shot":
        raise ctx.fail("only prompt_mode='zero-shot' exists (the reference has no few-shot form either)",
                       where="prompt_mode", value=prompt_mode)
    got = read_folder(ctx, ctx.find(path))
    if not isinstance(got, dict) or "multiple_choice" not in got:
        raise ctx.fail("the dataset needs a 'multiple_choice' split", file=ctx.find(path))
    return got["multiple_choice"]


LOADERS = {
    "Earth_Silver_MCQDataset": earth_silver_mcq,
}
