"""Gen inference: one generated answer per record."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.records import RecordLike, columns_of, is_messages, prompts_of
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
    prompts = prompts_of(records)  # a batch's prompts as one list (a compiled chunk's own)
    chat = list(map(is_messages, prompts))
    outputs: list[Any] = [None] * len(records)
    if all(chat) or not any(chat):  # one kind: the batch's list goes as it is
        if prompts:
            outputs = list(caller.call("chat" if chat[0] else "generate", prompts, params))
    else:
        for kind, want in (("chat", True), ("generate", False)):
            idx = [i for i, c in enumerate(chat) if c is want]
            got = caller.call(kind, [prompts[i] for i in idx], params)
            for i, v in zip(idx, got):
                outputs[i] = v
    cols = columns_of(records)
    if cols is not None:  # a compiled chunk's columns: no record object is made
        indices, _, shots = cols
        return [GenResult(i, p, list(s or []), o, {}) for i, p, s, o in zip(indices, prompts, shots, outputs)]
    return [GenResult(r.index, r.rendered, list(r.shot_ids or []), outputs[i], dict(getattr(r, "row", {}) or {}))
            for i, r in enumerate(records)]
