"""Scoring the label prompts of a PPL row as one packed sequence: the prefix once, every label's suffix after it.

``prefix + suffix_1 + ... + suffix_k`` runs as one row of one forward. A 4-D attention mask
lets each suffix see the prefix and itself only, and position ids restart after the prefix
for each suffix, so every token is computed as in its own full prompt. Nothing is copied per
label (no KV cache is kept, expanded or concatenated) and a batch of rows is one forward.
Rows are right-padded; a pad position attends to itself alone so it stays finite.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence


@dataclass
class Packed:
    """One row's packed tokens: the shared prefix (``p`` tokens), then each label's own tokens."""

    ids: list[int]
    positions: list[int]
    p: int
    spans: list[tuple[int, int]]  # where each label's suffix lies in ``ids``


def pack(seqs: Sequence[Sequence[int]], p: int) -> Packed:
    """``seqs`` share their first ``p`` tokens; each has at least one token after them."""
    ids = list(seqs[0][:p])
    positions = list(range(p))
    spans = []
    for s in seqs:
        start = len(ids)
        ids.extend(s[p:])
        positions.extend(range(p, len(s)))
        spans.append((start, len(ids)))
    return Packed(ids, positions, p, spans)


def packed_batch(torch: Any, rows: Sequence[Packed], pad_id: int, dtype: Any) -> tuple[Any, Any, Any]:
    """Input ids, the additive 4-D attention mask (0 = may attend) and the position ids of a batch."""
    width = max(len(r.ids) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    pos = torch.zeros((len(rows), width), dtype=torch.long)
    allow = torch.zeros((len(rows), 1, width, width), dtype=torch.bool)
    causal = torch.ones((width, width), dtype=torch.bool).tril()
    for i, r in enumerate(rows):
        n = len(r.ids)
        ids[i, :n] = torch.tensor(r.ids, dtype=torch.long)
        pos[i, :n] = torch.tensor(r.positions, dtype=torch.long)
        allow[i, 0, :r.p, :r.p] = causal[:r.p, :r.p]
        for a, e in r.spans:
            allow[i, 0, a:e, :r.p] = True
            allow[i, 0, a:e, a:e] = causal[:e - a, :e - a]
        idx = torch.arange(n, width)
        allow[i, 0, idx, idx] = True
    mask = torch.zeros(allow.shape, dtype=dtype).masked_fill_(~allow, torch.finfo(dtype).min)
    return ids, mask, pos


def score_packed(torch: Any, forward: Callable[[Any, Any, Any], Any], rows: Sequence[Packed], pad_id: int,
                 dtype: Any) -> list[list[list[float]]]:
    """Per-token log-probs (tokens 2..n) of every label prompt of every row, from one forward."""
    ids, mask, pos = packed_batch(torch, rows, pad_id, dtype)
    logits = forward(ids, mask, pos)
    dev = logits.device
    lse = torch.logsumexp(logits.float(), -1)  # log-softmax without a second vocab-wide tensor
    nxt = torch.cat([ids[:, 1:], ids[:, -1:]], 1).to(dev)
    lp_next = (logits.gather(-1, nxt.unsqueeze(-1)).squeeze(-1).float() - lse).cpu().tolist()
    firsts = []  # each label's first own token, predicted from the prefix's last position
    for i, r in enumerate(rows):
        tok = torch.tensor([r.ids[a] for a, _ in r.spans], device=dev)
        firsts.append((logits[i, r.p - 1].float()[tok] - lse[i, r.p - 1]).cpu().tolist())
    out = []
    for r, lp, first in zip(rows, lp_next, firsts):
        head = lp[:r.p - 1]
        out.append([head + [f] + lp[a:e - 1] for (a, e), f in zip(r.spans, first)])
    return out
