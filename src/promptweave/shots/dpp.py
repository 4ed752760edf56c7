"""DPP: TopK candidates, then a greedy determinantal-point-process pick balancing relevance and diversity."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from promptweave.shots.base import Row
from promptweave.shots.embed import inner_product_top_k
from promptweave.shots.topk import EmbeddingRetriever


def greedy_map_dpp(kernel: np.ndarray, max_length: int, eps: float = 1e-10) -> list[int]:
    """Fast greedy MAP inference for a DPP (Chen et al., 2018): incremental Cholesky updates."""
    n = kernel.shape[0]
    max_length = min(max_length, n)
    if max_length <= 0:
        return []
    cis = np.zeros((max_length, n))
    di2s = np.copy(np.diag(kernel)).astype(np.float64)
    chosen = [int(np.argmax(di2s))]
    while len(chosen) < max_length:
        k = len(chosen) - 1
        sel = chosen[-1]
        di = np.sqrt(max(di2s[sel], 0.0)) or eps
        eis = (kernel[sel, :] - cis[:k, sel] @ cis[:k, :]) / di
        cis[k, :] = eis
        di2s -= np.square(eis)
        di2s[chosen] = -np.inf  # never pick a row twice
        chosen.append(int(np.argmax(di2s)))
    return chosen


def dpp_kernel(query: np.ndarray, cands: np.ndarray, scale_factor: float) -> tuple[np.ndarray, np.ndarray]:
    """Relevance-weighted similarity kernel over the candidates, as in the two-stage DPP of Ye et al. (2023)."""
    q = query / max(np.linalg.norm(query), 1e-12)
    c = cands / np.maximum(np.linalg.norm(cands, axis=1, keepdims=True), 1e-12)
    rel = (c @ q + 1) / 2
    rel = np.exp((rel - rel.max()) / (2 * scale_factor))
    sim = (c @ c.T + 1) / 2
    return rel[None, :] * sim * rel[:, None], rel


class DPPRetriever(EmbeddingRetriever):
    """``ice_num`` rows chosen by greedy DPP among the ``candidate_num`` nearest, ordered by relevance."""

    name = "DPPRetriever"

    def __init__(self, *, candidate_num: int = 24, scale_factor: float = 0.1, seed: int = 1, **kw: Any) -> None:
        kw.setdefault("ice_num", 8)
        super().__init__(**kw)
        self.candidate_num = candidate_num
        self.scale_factor = scale_factor
        self.seed = seed  # accepted as the reference does; the greedy pick is deterministic

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "candidate_num": self.candidate_num, "scale_factor": self.scale_factor}

    def select_rows(self, train: Sequence[Row], test: Sequence[Row], indices: Sequence[int], *,
                    same_split: bool = False) -> list[list[int]]:
        indices = list(indices)
        embedded = self._embedded(train, test, indices, same_split)
        if embedded is None:
            return [[] for _ in indices]
        train_emb, test_emb = embedded
        exclude = indices if same_split else None
        near = inner_product_top_k(test_emb, train_emb, max(self.candidate_num, self.ice_num), exclude=exclude)
        out = []
        for i, ids in enumerate(near):
            kernel, rel = dpp_kernel(test_emb[i].astype(np.float64), train_emb[ids].astype(np.float64),
                                     self.scale_factor)
            picked = greedy_map_dpp(kernel, self.ice_num)
            picked = sorted(picked, key=lambda p: (-rel[p], p))
            out.append([ids[p] for p in picked])
        return out
