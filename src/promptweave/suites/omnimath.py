"""Omni-MATH (olympiad-level maths): its loader."""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.sources import read_hf_named


def omni_math(ctx: LoadContext) -> Splits:
    """Omni-MATH's test split, by its hub name from the local Hugging Face cache (the reference takes no path)."""
    got = read_hf_named("KbsdJames/Omni-MATH")
    if not isinstance(got, dict) or "test" not in got:
        raise ctx.fail("the cached KbsdJames/Omni-MATH dataset has no test split", file="KbsdJames/Omni-MATH")
    return got["test"]


LOADERS = {
    "OmniMathDataset": omni_math,
}
