"""PPL inference: score every label's prompt, choose the label with the lowest average NLL.

The labels of one row share their context, so they are sent as one group: a local
model runs the common prefix once and only the label suffixes on top of its KV cache.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from promptweave.errors import ConfigError, ModelError
from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.failure import RowFailure, first_failure
from promptweave.infer.records import RecordLike, columns_of
from promptweave.infer.score_values import is_compact
from promptweave.models.base import backend_identity_name, capabilities_of


def average_nll(token_logprobs: Sequence[float], mask_length: int | None = None) -> float:
    """OpenCompass's PPL of a prompt from its per-token log-probs (tokens 2..n).

    Without a mask: summed NLL of tokens 2..n divided by n (the whole length, as the
    reference divides by the count of non-pad tokens). With ``mask_length`` m, only
    tokens m+1..n count and the divisor is n - m.
    """
    if is_compact(token_logprobs) and mask_length is None:  # a summed score (infer/score_values.py)
        return -token_logprobs["logprob_sum"] / token_logprobs["tokens"]  # type: ignore[call-overload]
    n = len(token_logprobs) + 1
    if mask_length is None:
        return -sum(token_logprobs) / n
    kept = token_logprobs[max(mask_length - 1, 0):]
    return -sum(kept) / max(n - mask_length, 1)


@dataclass
class PPLResult:
    index: int
    labels: list
    ppl: dict
    prediction: Any
    shot_ids: list
    prompts: dict
    row: dict = field(default_factory=dict)
    error: RowFailure | None = None


def group_by_row(records: Sequence[RecordLike]) -> list[list[RecordLike]]:
    """Records of the same row index, in first-seen order, labels in their given order."""
    rows: dict[int, list[RecordLike]] = {}
    for r in records:
        rows.setdefault(r.index, []).append(r)
    return list(rows.values())


def infer_ppl(model: Any, records: Sequence[RecordLike], cache: ResponseCache | None = None,
              progress: Callable[[int], None] | None = None, *, normalizing_str: str | None = None,
              shared_prefix: bool = True) -> list[PPLResult]:
    """Score each row's label prompts and pick the label with the lowest PPL.

    With ``normalizing_str`` (OpenCompass's option) a label's score is the PPL of its
    answer after its context minus the PPL of the answer after ``normalizing_str``;
    records must then carry ``ppl_context`` and ``ppl_answer`` and the model must count tokens.
    A compiled chunk is read by its columns (no record object is made).
    """
    caller = CachedCaller(model, cache, progress, row_errors=True)
    cols = columns_of(records) if normalizing_str is None else None  # normalizing reads each record's split
    recs: list[Any] = []
    if cols is not None:
        indices, prompts, shots = cols
        labels: Sequence[Any] = records.labels  # type: ignore[attr-defined]
    else:
        recs = list(records)
        indices, prompts, shots = [r.index for r in recs], [r.rendered for r in recs], [r.shot_ids for r in recs]
        labels = [r.label for r in recs]
    # each row's labels (positions in the batch), in first-seen row order; together already in a built chunk
    by_row: dict[int, list[int]] = {}
    for p, i in enumerate(indices):
        by_row.setdefault(i, []).append(p)
    rows = list(by_row.values())
    if cols is None:  # a compiled chunk's labels share their row's examples by construction
        for index, grp in by_row.items():
            ids = [list(shots[p] or []) for p in grp]
            if any(s != ids[0] for s in ids):
                raise ConfigError("every label of a PPL row must use the same in-context examples",
                                  field=f"row[{index}].shot_ids", value=ids)
    order = [p for grp in rows for p in grp]
    if order != list(range(len(order))):
        prompts = [prompts[p] for p in order]
    groups, at = [], 0
    for grp in rows:
        groups.append(range(at, at + len(grp)))
        at += len(grp)
    norm = _normalizing(model, [recs[p] for p in order], normalizing_str) if normalizing_str is not None else None
    scores = caller.call("score", prompts, None, [list(g) for g in groups] if shared_prefix else None,
                         summed=norm is None)
    if norm is not None:
        ppls = _normalized(norm, caller, scores, groups, shared_prefix)
    else:
        ppls = [first_failure(scores[k] for k in idx) or [average_nll(scores[k]) for k in idx] for idx in groups]
    out: list[PPLResult] = []
    for grp, idx, got in zip(rows, groups, ppls):
        first = grp[0]
        labs = [labels[p] for p in grp]
        texts = {lab: prompts[k] for lab, k in zip(labs, idx)}
        row = dict(getattr(recs[first], "row", {}) or {}) if recs else {}
        if isinstance(got, RowFailure):  # a label prompt could not be scored: no prediction, the failure kept
            out.append(PPLResult(indices[first], labs, {}, None, list(shots[first] or []), texts, row, got))
            continue
        ppl = dict(zip(labs, got))
        best = min(ppl, key=lambda k: ppl[k])  # first label wins ties, as the reference's argmin does
        out.append(PPLResult(indices[first], labs, ppl, best, list(shots[first] or []), texts, row))
    return out


def _normalizing(model: Any, recs: list, normalizing_str: str) -> tuple[list[int], list[str], int]:
    """What ``normalizing_str`` scoring needs, checked before any call: each record's context length in
    tokens, each answer after ``normalizing_str``, and that string's own length."""
    if not capabilities_of(model).token_counts:
        raise ModelError("normalizing_str needs a model that counts tokens (a local model)", field="model",
                         value=backend_identity_name(model))
    ctx_len: list[int] = []
    norm_prompts: list[str] = []
    for r in recs:
        context, answer = getattr(r, "ppl_context", None), getattr(r, "ppl_answer", None)
        if context is None or answer is None:
            raise ConfigError("normalizing_str needs records with ppl_context and ppl_answer",
                              field=f"row[{r.index}]")
        ctx_len.append(model.count_tokens(context))
        norm_prompts.append(normalizing_str + answer)
    return ctx_len, norm_prompts, model.count_tokens(normalizing_str)


def _normalized(norm: tuple[list[int], list[str], int], caller: CachedCaller, scores: list, groups: list,
                shared_prefix: bool) -> list[Any]:
    """Each row's label scores less each answer's PPL after ``normalizing_str``, or the row's RowFailure."""
    ctx_len, norm_prompts, norm_len = norm
    norm_scores = caller.call("score", norm_prompts, None, [list(range(len(norm_prompts)))] if shared_prefix else None)
    return [first_failure([scores[i] for i in idx] + [norm_scores[i] for i in idx])
            or [average_nll(scores[i], ctx_len[i]) - average_nll(norm_scores[i], norm_len) for i in idx]
            for idx in groups]
