"""Map retriever names (ours and the references' class names) to classes."""
from __future__ import annotations

import importlib
from typing import Any, Mapping

from promptweave.errors import RetrieverError
from promptweave.shots.base import Retriever

# name -> "module:Class"; imported lazily so optional dependencies load only when used.
RETRIEVERS: dict[str, str] = {
    "ZeroRetriever": "promptweave.shots.basic:ZeroRetriever",
    "FixKRetriever": "promptweave.shots.basic:FixKRetriever",
    "RandomRetriever": "promptweave.shots.basic:RandomRetriever",
    "SlidingWindowRetriever": "promptweave.shots.basic:SlidingKRetriever",
    "SlidingKRetriever": "promptweave.shots.basic:SlidingKRetriever",
    "BM25Retriever": "promptweave.shots.bm25:BM25Retriever",
    "TopkRetriever": "promptweave.shots.topk:TopkRetriever",
    "TopKRetriever": "promptweave.shots.topk:TopkRetriever",
    "VotekRetriever": "promptweave.shots.votek:VotekRetriever",
    "VoteKRetriever": "promptweave.shots.votek:VotekRetriever",
    "DPPRetriever": "promptweave.shots.dpp:DPPRetriever",
    "MDLRetriever": "promptweave.shots.mdl:MDLRetriever",
    "XiezhiRetriever": "promptweave.suites.xiezhi:XiezhiRetriever",  # a reference dataset's own retriever
}


def retriever_class(name: str) -> type[Retriever]:
    short = name.rsplit(".", 1)[-1]
    target = RETRIEVERS.get(short)
    if target is None:
        raise RetrieverError(f"unknown retriever {name!r}", field="type", value=name,
                             expected="one of " + ", ".join(sorted(RETRIEVERS)))
    modname, clsname = target.split(":")
    return getattr(importlib.import_module(modname), clsname)


def build_retriever(cfg: Mapping[str, Any] | Retriever | None) -> Retriever:
    """Build a retriever from a config dict (``type`` + settings); None means zero-shot."""
    if isinstance(cfg, Retriever):
        return cfg
    if cfg is None:
        cfg = {"type": "ZeroRetriever"}
    if not isinstance(cfg, Mapping):  # a typed error, not dict()'s ValueError
        raise RetrieverError("a retriever must be a dict with a 'type'", field="retriever", value=cfg)
    cfg = dict(cfg)
    kind = cfg.pop("type", "ZeroRetriever")
    if isinstance(kind, type):
        if issubclass(kind, Retriever):
            return kind(**cfg)
        kind = kind.__name__
    cls = retriever_class(str(kind))
    try:
        return cls(**cfg)
    except TypeError as exc:
        raise RetrieverError(f"bad settings for {cls.name}: {exc}", field="retriever") from None
