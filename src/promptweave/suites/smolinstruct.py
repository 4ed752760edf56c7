"""SMolInstruct (chemistry instruction tasks): its loader."""
from __future__ import annotations

from pathlib import Path

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.hub import one_split, read_folder
from promptweave.data.sources import (
    FILE_FORMATS,
    Split,
    read_hf_named,
)


def _local(path: str) -> bool:
    from promptweave.data.locate import is_data_id

    return is_data_id(path) or path.startswith((".", "/", "~")) or Path(path).suffix.lower() in FILE_FORMATS


def smolinstruct(ctx: LoadContext, path: str, name: str, mini_set: bool = False) -> Splits:
    """Rows of one ``task`` from the validation and test splits; ``mini_set`` samples 500 test rows with the
    reference's seed (1024)."""
    import random

    got = read_folder(ctx, ctx.find(path)) if _local(path) else read_hf_named(path)
    out = {}
    for split in ("validation", "test"):
        part = one_split(ctx, got, split)
        picked = [(part.locate(i), r) for i, r in enumerate(part.rows) if r.get("task") == name]
        if mini_set and split == "test":
            picked = random.Random(1024).sample(picked, min(500, len(picked)))
        out[split] = Split([r for _, r in picked], part.file, [w for w, _ in picked])
    return out


LOADERS = {
    "SmolInstructDataset": smolinstruct,
}
