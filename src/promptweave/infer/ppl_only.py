"""Perplexity of whole prompts (OpenCompass's ``PPLOnlyInferencer``): the prediction is each prompt's average
negative log-likelihood, for evaluators that average it (contamination and language-modelling datasets)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.ppl import average_nll
from promptweave.infer.records import RecordLike


@dataclass
class PPLOnlyResult:
    index: int
    prompt: Any
    ppl: float
    shot_ids: list


def infer_ppl_only(model: Any, records: Sequence[RecordLike], cache: ResponseCache | None = None,
                   progress: Callable[[int], None] | None = None) -> list[PPLOnlyResult]:
    scores = CachedCaller(model, cache, progress).call("score", [r.rendered for r in records], None, summed=True)
    return [PPLOnlyResult(r.index, r.rendered, average_nll(s), list(r.shot_ids or []))
            for r, s in zip(records, scores)]
