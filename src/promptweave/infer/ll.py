"""Log-likelihood choice (OpenCompass's ``LLInferencer``): each label's prompt ends with the row's ``cont``;
the label whose continuation is most likely wins (the first among equals, as the reference's ``index(max)``).

The continuation's log-likelihood is read from the whole prompt's token log-probs (one cached ``score`` call per
prompt): the tokens after the context, where the context is the prompt without its trailing ``cont``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptweave.errors import ModelError
from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.ppl import group_by_row
from promptweave.infer.records import RecordLike
from promptweave.models.base import backend_identity_name, capabilities_of


@dataclass
class LLResult:
    index: int
    prompts: dict
    loglikelihood: dict
    prediction: Any
    shot_ids: list


def _text(rendered: Any) -> str | None:
    if isinstance(rendered, str):
        return rendered
    if isinstance(rendered, (list, tuple)) and all(isinstance(s, str) for s in rendered):
        return "".join(rendered)
    return None


def infer_ll(model: Any, records: Sequence[RecordLike], conts: Mapping[int, Any], cache: ResponseCache | None = None,
             progress: Callable[[int], None] | None = None) -> list[LLResult]:
    if not capabilities_of(model).token_counts:
        raise ModelError("LLInferencer needs a model that counts tokens (a local model)", field="model",
                         value=backend_identity_name(model))
    rows = group_by_row(records)
    prompts = [r.rendered for grp in rows for r in grp]
    scores = CachedCaller(model, cache, progress).call("score", prompts, None)
    out = []
    pos = 0
    for grp in rows:
        cont = str(conts.get(grp[0].index, ""))
        ll: dict = {}
        for r in grp:
            lps = scores[pos]
            pos += 1
            text = _text(r.rendered)
            if text is None or not cont or not text.endswith(cont):
                raise ModelError("LLInferencer needs each label's prompt to end with the row's 'cont' text",
                                 field=f"row[{r.index}].cont", value=cont)
            n_ctx = model.count_tokens(text[:len(text) - len(cont)])
            ll[getattr(r, "label", None)] = float(sum(lps[max(n_ctx - 1, 0):]))
        best = max(ll.values())
        pred = next(k for k, v in ll.items() if v == best)
        out.append(LLResult(grp[0].index, {getattr(r, "label", None): r.rendered for r in grp}, ll, pred, list(grp[0].shot_ids or [])))
    return out
