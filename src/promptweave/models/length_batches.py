"""Batches of a local model's requests formed by exact token length (no torch needed).

A batch pads every row to its longest, so rows of like length go together: requests are
ordered longest first (ties keep their given order) and cut into batches of at most
``batch_size`` rows and, with a token budget, at most ``max_tokens`` padded positions
(rows x (longest + extra), ``extra`` being the tokens to generate). The caller answers each
batch and puts every answer back at its request's position, so outputs keep row order.
Longest first: the batch that needs the most memory runs first, so a budget that is too
large fails at once rather than at the end of a long run.
"""
from __future__ import annotations

from typing import Sequence

BATCHING_NOTE = "sorted by token length (longest first), at most {bs} rows{budget} per batch; rows keep their order"


def length_batches(lengths: Sequence[int], batch_size: int, max_tokens: int | None = None, *,
                   extra: int = 0, weights: Sequence[int] | None = None, sort: bool = True) -> list[list[int]]:
    """Positions into ``lengths`` grouped into batches (see the module docstring).

    ``weights`` counts what one request is against ``batch_size`` (a packed PPL row holds several
    label prompts); ``sort=False`` keeps the given order (file order). A request over the budget on
    its own still goes, alone: a budget never drops work.
    """
    bs = max(1, int(batch_size))
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)) if sort else range(len(lengths))
    out: list[list[int]] = []
    cur: list[int] = []
    width = used = 0
    for i in order:
        w = weights[i] if weights is not None else 1
        wide = max(width, lengths[i] + extra)
        if cur and (used + w > bs or (max_tokens is not None and (len(cur) + 1) * wide > max_tokens)):
            out.append(cur)
            cur, width, used = [], 0, 0
            wide = lengths[i] + extra
        cur.append(i)
        width, used = wide, used + w
    if cur:
        out.append(cur)
    return out


def padded_positions(lengths: Sequence[int], batches: Sequence[Sequence[int]], extra: int = 0) -> int:
    """Positions a set of batches pushes through the model, padding included (for stats and benchmarks)."""
    return sum(len(b) * (max(lengths[i] for i in b) + extra) for b in batches if b)


def batching_note(batch_size: int, max_tokens: int | None = None) -> str:
    """One line for the plan: how a local model's batches are formed."""
    budget = f" and {max_tokens} padded tokens" if max_tokens else ""
    return BATCHING_NOTE.format(bs=max(1, int(batch_size)), budget=budget)
