"""CLP inference: the conditional probability of each choice's token right after the prompt."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from promptweave.errors import ConfigError, ModelError
from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.records import RecordLike
from promptweave.models.base import backend_identity_name, capabilities_of


@dataclass
class CLPResult:
    index: int
    prompt: Any
    shot_ids: list
    probs: list
    prediction: Any
    row: dict = field(default_factory=dict)


def choice_token_ids(model: Any, choices: Sequence[str]) -> list[int]:
    """The token id of each choice (its last token, as the reference takes it)."""
    if not capabilities_of(model).local_lm:
        raise ModelError("CLP needs a local model with a tokenizer", field="model", value=backend_identity_name(model))
    tok = model.tokenizer
    ids = []
    for c in choices:
        enc = tok(c, add_special_tokens=False)["input_ids"]
        if not enc:
            raise ConfigError("a CLP choice tokenizes to nothing", field="choices", value=c)
        ids.append(enc[-1])
    if len(set(ids)) != len(ids):
        raise ConfigError("two CLP choices share a token, so they cannot be told apart", field="choices",
                          value=list(choices))
    return ids


def infer_clp(model: Any, records: Sequence[RecordLike], choices: Sequence[str],
              cache: ResponseCache | None = None, progress: Callable[[int], None] | None = None) -> list[CLPResult]:
    """Probability of each choice as the next token; the prediction is the most probable choice."""
    if not choices:
        raise ConfigError("CLP needs a non-empty list of choices", field="choices", value=choices)
    ids = choice_token_ids(model, choices)
    caller = CachedCaller(model, cache, progress)
    got = caller.call("next_token", [(r.rendered, ids) for r in records])
    out = []
    for r, lps in zip(records, got):
        probs = [math.exp(x) for x in lps]
        best = max(range(len(probs)), key=lambda i: probs[i])
        out.append(CLPResult(r.index, r.rendered, list(r.shot_ids or []), probs, choices[best],
                             dict(getattr(r, "row", {}) or {})))
    return out
