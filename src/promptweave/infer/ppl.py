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


def average_nll(token_logprobs: Sequence[float], mask_length: int | None = None) -> float:
    """OpenCompass's PPL of a prompt from its per-token log-probs (tokens 2..n).

    Without a mask: summed NLL of tokens 2..n divided by n (the whole length, as the
    reference divides by the count of non-pad tokens). With ``mask_length`` m, only
    tokens m+1..n count and the divisor is n - m.
    """
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
    if normalizing_str is not None:
        rows = group_by_row(records)
        _same_shots([[r.shot_ids for r in grp] for grp in rows], [grp[0].index for grp in rows])
        prompts: list[Any] = []
        groups: list[list[int]] = []
        for grp in rows:
            groups.append(list(range(len(prompts), len(prompts) + len(grp))))
            prompts.extend(r.rendered for r in grp)
        return _normalized(model, rows, caller, prompts, groups, normalizing_str, shared_prefix)
    cols = columns_of(records)
    if cols is not None:
        indices, prompts, shots = cols
        labels: Sequence[Any] = records.labels  # type: ignore[attr-defined]
        rows_of: Callable[[int], Any] = lambda p: {}  # noqa: E731
    else:
        recs = list(records)
        indices, prompts, shots = [r.index for r in recs], [r.rendered for r in recs], [r.shot_ids for r in recs]
        labels = [r.label for r in recs]
        rows_of = lambda p: getattr(recs[p], "row", {})  # noqa: E731
    # a row's labels, in first-seen row order (together already in a built chunk)
    by_row: dict[int, list[int]] = {}
    for p, i in enumerate(indices):
        by_row.setdefault(i, []).append(p)
    positions = list(by_row.values())
    if cols is None:  # a compiled chunk's labels share their row's examples by construction
        _same_shots([[shots[p] for p in grp] for grp in positions], list(by_row))
    order = [p for grp in positions for p in grp]
    if order != list(range(len(order))):
        prompts = [prompts[p] for p in order]
    groups, at = [], 0
    for grp in positions:
        groups.append(list(range(at, at + len(grp))))
        at += len(grp)
    scores = caller.call("score", prompts, None, groups if shared_prefix else None)
    out: list[PPLResult] = []
    for grp, idx in zip(positions, groups):
        first = grp[0]
        labs = [labels[p] for p in grp]
        texts = {labels[p]: prompts[k] for p, k in zip(grp, idx)}
        fault = first_failure(scores[k] for k in idx)
        if fault is not None:
            out.append(PPLResult(indices[first], labs, {}, None, list(shots[first] or []), texts,
                                 dict(rows_of(first) or {}), fault))
            continue
        ppl = {labels[p]: average_nll(scores[k]) for p, k in zip(grp, idx)}
        best = min(ppl, key=lambda k: ppl[k])  # first label wins ties, as the reference's argmin does
        out.append(PPLResult(indices[first], labs, ppl, best, list(shots[first] or []), texts,
                             dict(rows_of(first) or {})))
    return out


def _same_shots(shots: list[list[Any]], indices: list[int]) -> None:
    for row_shots, index in zip(shots, indices):
        ids = [list(s or []) for s in row_shots]
        if any(s != ids[0] for s in ids):
            raise ConfigError("every label of a PPL row must use the same in-context examples",
                              field=f"row[{index}].shot_ids", value=ids)


def _failed(grp: list[RecordLike], fault: RowFailure) -> PPLResult:
    """A row one of whose label prompts could not be scored: no prediction, the failure kept."""
    return PPLResult(grp[0].index, [r.label for r in grp], {}, None, list(grp[0].shot_ids or []),
                     {r.label: r.rendered for r in grp}, dict(getattr(grp[0], "row", {}) or {}), fault)


def _result(grp: list[RecordLike], ppl: dict) -> PPLResult:
    best = min(ppl, key=lambda k: ppl[k])  # first label wins ties, as the reference's argmin does
    return PPLResult(grp[0].index, [r.label for r in grp], ppl, best, list(grp[0].shot_ids or []),
                     {r.label: r.rendered for r in grp}, dict(getattr(grp[0], "row", {}) or {}))


def _normalized(model: Any, rows: list, caller: CachedCaller, prompts: list, groups: list,
                normalizing_str: str, shared_prefix: bool) -> list[PPLResult]:
    if not hasattr(model, "count_tokens"):
        raise ModelError("normalizing_str needs a model that counts tokens (a local model)", field="model",
                         value=getattr(model, "name", None))
    ctx_len: list[int] = []
    norm_prompts: list[str] = []
    for grp in rows:
        for r in grp:
            context, answer = getattr(r, "ppl_context", None), getattr(r, "ppl_answer", None)
            if context is None or answer is None:
                raise ConfigError("normalizing_str needs records with ppl_context and ppl_answer",
                                  field=f"row[{r.index}]")
            ctx_len.append(model.count_tokens(context))
            norm_prompts.append(normalizing_str + answer)
    norm_len = model.count_tokens(normalizing_str)
    scores = caller.call("score", prompts, None, groups if shared_prefix else None)
    norm_scores = caller.call("score", norm_prompts, None, [list(range(len(norm_prompts)))] if shared_prefix else None)
    out = []
    for grp, idx in zip(rows, groups):
        fault = first_failure([scores[i] for i in idx] + [norm_scores[i] for i in idx])
        if fault is not None:
            out.append(_failed(grp, fault))
            continue
        ppl = {r.label: average_nll(scores[i], ctx_len[i]) - average_nll(norm_scores[i], norm_len)
               for r, i in zip(grp, idx)}
        out.append(_result(grp, ppl))
    return out
