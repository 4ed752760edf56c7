"""Vote-k: one diverse, representative set of train rows, shared by every test row."""
from __future__ import annotations

import random
from typing import Any, Sequence

import numpy as np

from promptweave.shots.base import Row
from promptweave.shots.topk import EmbeddingRetriever


def votek_select(emb: np.ndarray, select_num: int, k: int, *, overlap_threshold: float = 1.0,
                 seed: int = 1, block: int = 512) -> list[int]:
    """Vote-k selection as the reference implements it.

    Each row votes for its ``k`` most cosine-similar other rows. Rows are ranked by
    votes (ties: the row that first received a vote first); a row is taken unless
    its voter set overlaps some higher-ranked row's voters by ``overlap_threshold``
    of its size. Missing picks are filled by a seeded random sample.
    """
    n = emb.shape[0]
    select_num = min(select_num, n)
    norm = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    voters: dict[int, list[int]] = {}
    kk = min(k, n - 1)
    for start in range(0, n, block):
        sims = norm[start:start + block] @ norm.T
        for j, row in enumerate(sims):
            i = start + j
            row[i] = -np.inf  # a row never votes for itself
            if kk <= 0:
                continue
            near = np.argpartition(-row, kk - 1)[:kk]
            # The reference walks its neighbours from least to most similar.
            for idx in near[np.lexsort((-near, row[near]))].tolist():
                voters.setdefault(idx, []).append(i)
    ranked = sorted(voters.items(), key=lambda kv: len(kv[1]), reverse=True)  # stable: keeps first-vote order
    chosen: list[int] = []
    sets = [set(v) for _, v in ranked]
    for j, (idx, _) in enumerate(ranked):
        if len(chosen) >= select_num:
            break
        cand = sets[j]
        if any(len(cand & sets[p]) >= overlap_threshold * len(cand) for p in range(j)):
            continue
        chosen.append(int(idx))
    if len(chosen) < select_num:
        taken = set(chosen)
        rest = [i for i in range(n) if i not in taken]
        chosen += random.Random(seed).sample(rest, select_num - len(chosen))
    return chosen


class VotekRetriever(EmbeddingRetriever):
    """The same ``ice_num`` vote-k rows for every test row (OpenCompass's VotekRetriever)."""

    name = "VotekRetriever"

    def __init__(self, *, votek_k: int = 5, overlap_threshold: float = 1.0, seed: int = 1, **kw: Any) -> None:
        super().__init__(**kw)
        self.votek_k = votek_k
        self.overlap_threshold = overlap_threshold
        self.seed = seed

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), "votek_k": self.votek_k, "overlap_threshold": self.overlap_threshold,
                "seed": self.seed}

    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        if not train:
            return [[] for _ in test]
        emb = self.embed_rows(train)
        ids = votek_select(emb, self.ice_num, self.votek_k, overlap_threshold=self.overlap_threshold,
                           seed=self.seed)
        if not same_split:
            return [list(ids) for _ in test]
        # Same rows: drop the test row itself and keep the set's size from the row next in line.
        extra: list[int] | None = None
        out = []
        for i in range(len(test)):
            if i in ids:
                if extra is None:
                    extra = votek_select(emb, self.ice_num + 1, self.votek_k,
                                         overlap_threshold=self.overlap_threshold, seed=self.seed)
                out.append([j for j in extra if j != i][: len(ids)])
            else:
                out.append(list(ids))
        return out
