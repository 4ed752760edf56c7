"""Gen inference: one generated answer per record."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.records import RecordLike, is_messages
from promptweave.models.base import GenerationParams


@dataclass
class GenResult:
    index: int
    prompt: Any
    shot_ids: list
    output: Any  # the answer, or a RowFailure when its request failed on its own
    row: dict = field(default_factory=dict)


def infer_gen(model: Any, records: Sequence[RecordLike], params: GenerationParams,
              cache: ResponseCache | None = None, progress: Callable[[int], None] | None = None) -> list[GenResult]:
    """Generate for every record (chat message lists go to ``chat``, text and segments to ``generate``)."""
    caller = CachedCaller(model, cache, progress, row_errors=True)
    chat_idx = [i for i, r in enumerate(records) if is_messages(r.rendered)]
    text_idx = [i for i, r in enumerate(records) if not is_messages(r.rendered)]
    outputs: list[Any] = [None] * len(records)
    for kind, idx in (("chat", chat_idx), ("generate", text_idx)):
        if idx:
            got = caller.call(kind, [records[i].rendered for i in idx], params)
            for i, v in zip(idx, got):
                outputs[i] = v
    return [GenResult(r.index, r.rendered, list(r.shot_ids or []), outputs[i], dict(getattr(r, "row", {}) or {}))
            for i, r in enumerate(records)]
