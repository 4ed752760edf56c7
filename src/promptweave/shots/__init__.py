"""Retrievers: choose in-context example ids per test row."""
from promptweave.shots.base import Retrieval, Retriever
from promptweave.shots.basic import FixKRetriever, RandomRetriever, SlidingKRetriever, ZeroRetriever
from promptweave.shots.registry import build_retriever, retriever_class

__all__ = ["Retrieval", "Retriever", "ZeroRetriever", "FixKRetriever", "RandomRetriever", "SlidingKRetriever",
           "build_retriever", "retriever_class"]
