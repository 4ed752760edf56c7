"""Self-consistency (OpenCompass's ``SCInferencer``): ``sc_size`` sampled answers per prompt, majority vote.

Each sample is its own cached call (the sample number is part of the cache key, and a configured ``seed``
becomes ``seed + k``), so a resumed run re-sends only the samples it lacks. The vote is over the answers after
the dataset's ``pred_postprocessor`` (the evaluation's public ``process_prediction``); ties go to the answer
seen first, as ``collections.Counter.most_common`` orders them.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import SampleCaller
from promptweave.infer.records import RecordLike, is_messages
from promptweave.models.base import GenerationParams


@dataclass
class SCResult:
    index: int
    prompt: Any
    shot_ids: list
    samples: list
    processed: list
    prediction: Any
    row: dict = field(default_factory=dict)


def majority(answers: Sequence[Any]) -> Any:
    """The most frequent answer; the first seen among equals. Unhashable answers are compared as text."""
    if not answers:
        return None
    keys = [a if isinstance(a, (str, int, float, bool, type(None))) else repr(a) for a in answers]
    best = Counter(keys).most_common(1)[0][0]
    return answers[keys.index(best)]


def infer_sc(model: Any, records: Sequence[RecordLike], params: GenerationParams, sc_size: int,
             process: Callable[[Any], Any] = lambda x: x, cache: ResponseCache | None = None,
             progress: Callable[[int], None] | None = None) -> list[SCResult]:
    """``sc_size`` generations per record, each postprocessed with ``process``, and their majority."""
    samples: list[list[Any]] = [[] for _ in records]
    chat_idx = [i for i, r in enumerate(records) if is_messages(r.rendered)]
    text_idx = [i for i, r in enumerate(records) if not is_messages(r.rendered)]
    for k in range(sc_size):
        p = params if params.seed is None else dataclasses.replace(params, seed=params.seed + k)
        caller = SampleCaller(model, cache, progress, sample=k, tag="sc")
        for kind, idx in (("chat", chat_idx), ("generate", text_idx)):
            if idx:
                got = caller.call(kind, [records[i].rendered for i in idx], p)
                for i, v in zip(idx, got):
                    samples[i].append(v)
    out = []
    for r, outs in zip(records, samples):
        processed = [process(o) for o in outs]
        out.append(SCResult(r.index, r.rendered, list(r.shot_ids or []), outs, processed, majority(processed),
                            dict(getattr(r, "row", {}) or {})))
    return out
