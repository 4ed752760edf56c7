"""Retrievers: choose in-context example ids per test row.

The searching retrievers (BM25, TopK, VoteK, DPP, MDL) are imported lazily: their
names resolve on first use so ``import promptweave.shots`` stays light.
"""
from typing import Any

from promptweave.shots.base import Retrieval, Retriever
from promptweave.shots.basic import FixKRetriever, RandomRetriever, SlidingKRetriever, ZeroRetriever
from promptweave.shots.registry import RETRIEVERS, build_retriever, retriever_class

_LAZY = {"BM25Retriever": "bm25", "BM25Index": "bm25", "TopkRetriever": "topk", "VotekRetriever": "votek",
         "DPPRetriever": "dpp", "MDLRetriever": "mdl"}

__all__ = ["Retrieval", "Retriever", "ZeroRetriever", "FixKRetriever", "RandomRetriever", "SlidingKRetriever",
           "build_retriever", "retriever_class", "RETRIEVERS", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"promptweave.shots.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'promptweave.shots' has no attribute {name!r}")
