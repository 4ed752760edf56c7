"""Sliding-window cross-entropy over a corpus (OpenCompass's ``SWCELossInferencer``), for bits per character.

The reference tokenizes every row's prompt on its own (the tokenizer's usual special tokens added), joins the
token ids of all rows into one stream of N tokens, and slides a window of ``block_size + 1`` tokens by ``stride``:
``floor((N - block_size - 1) / stride) + 1`` windows, the tail past the last one unscored. Window k starts at
``k * stride``; the model reads its first ``block_size`` tokens and predicts tokens 1..block_size of the window; the
first window counts every prediction, each later one only the predictions of the tokens past the previous
window's end (the last ``stride`` tokens). Losses are natural-log cross-entropy sums.

The reference writes one record per batch of windows; here each scored token's loss is credited to the row the
token came from, so every row has a record (``loss``: its share, ``total_chr_num``: the characters of the whole
corpus, as every reference record carries) and the sum over rows is the reference's total. ``BPCEvaluator``
gives ``sum(loss) / (total_chr_num * ln 2)``. Window losses are cached, so a rerun recomputes nothing.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from promptweave.errors import ConfigError, DataError
from promptweave.infer.cache import ResponseCache
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.local_lm import prompt_text, require_local_lm
from promptweave.models.base import backend_batch_size

WHO = "SWCELossInferencer"


@dataclass(frozen=True)
class Window:
    begin: int
    first_target: int  # window position of the first counted prediction (1..block_size)


def check_settings(settings: Mapping[str, Any], *, file: str | None, where: str) -> tuple[int, int]:
    """``block_size`` and ``stride`` (the reference's defaults 1900 and 512), checked at plan time."""
    out = []
    for key, default in (("block_size", 1900), ("stride", 512)):
        v = settings.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ConfigError(f"{WHO} {key} must be a positive whole number of tokens", file=file,
                              field=f"{where}.{key}", value=v)
        out.append(v)
    return out[0], out[1]


def windows(n_tokens: int, block_size: int, stride: int) -> list[Window]:
    """The reference's windows over ``n_tokens`` tokens (see the module docstring)."""
    span = block_size + 1
    if n_tokens < span:
        return []
    count = (n_tokens - span) // stride + 1
    out = []
    prev_end = 0
    for k in range(count):
        begin = k * stride
        end = begin + span
        fresh = end - prev_end  # tokens past the previous window's end
        out.append(Window(begin, max(1, span - fresh)))
        prev_end = end
    return out


@dataclass
class SWRowResult:
    index: int
    prompt: Any
    loss: float
    scored_tokens: int
    total_chr_num: int
    shot_ids: list


def infer_sw_ce_loss(model: Any, records: Iterable[Any], block_size: int, stride: int,
                     cache: ResponseCache | None = None,
                     progress: Callable[[int], None] | None = None) -> list[SWRowResult]:
    """Every row's share of the corpus loss (all rows of the task: the windows run across rows)."""
    require_local_lm(model, WHO)
    torch = model.torch
    caller = CachedCaller(model, cache, progress)
    recs, stream, owner, chars = [], [], [], 0
    for r in records:
        text = prompt_text(r.rendered, WHO)
        ids = list(model.tokenizer.encode(text))
        recs.append(r)
        stream.extend(ids)
        owner.extend([len(recs) - 1] * len(ids))
        chars += len(text)
    wins = windows(len(stream), block_size, stride)
    if not wins:
        raise DataError(f"{WHO}: the corpus has {len(stream)} tokens, fewer than block_size + 1 = {block_size + 1}, "
                        "so no window is scored (the reference scores nothing either)", field="infer_cfg.inferencer.block_size",
                        value=block_size, expected=f"block_size <= {max(len(stream) - 1, 0)}")
    corpus = hashlib.sha256(repr(stream).encode()).hexdigest()
    requests = [{"corpus": corpus, "begin": w.begin, "block_size": block_size, "first": w.first_target}
                for w in wins]
    keys = [caller.key("sw_ce_loss", q, None) for q in requests]
    found = cache.get_many(keys) if cache is not None else {}
    losses: list[list[float] | None] = [found.get(k) for k in keys]
    todo = [i for i, v in enumerate(losses) if v is None]
    if len(wins) - len(todo):
        caller.progress(len(wins) - len(todo))
    bs = backend_batch_size(model, default=1)
    for s in range(0, len(todo), bs):
        chunk = todo[s:s + bs]
        batch = torch.tensor([stream[wins[i].begin:wins[i].begin + block_size + 1] for i in chunk], dtype=torch.long)
        inputs = batch[:, :block_size]
        logits = model.forward(inputs, torch.ones_like(inputs)).logits.float()
        targets = batch[:, 1:].to(logits.device)
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                                               reduction="none").view(len(chunk), block_size).cpu()
        rows = []
        for b, i in enumerate(chunk):
            first = wins[i].first_target
            losses[i] = [float(v) for v in ce[b, first - 1:].tolist()]  # predictions of window tokens first..B
            rows.append((keys[i], caller.name, "sw_ce_loss", requests[i], losses[i]))
        if cache is not None:
            cache.put_many(rows)
        caller.progress(len(chunk))
    share = [0.0] * len(recs)
    counted = [0] * len(recs)
    for w, vals in zip(wins, losses):
        start = w.begin + w.first_target  # stream position of the first counted token
        for off, v in enumerate(vals or []):
            k = owner[start + off]
            share[k] += v
            counted[k] += 1
    return [SWRowResult(r.index, r.rendered, share[k], counted[k], chars, list(r.shot_ids or []))
            for k, r in enumerate(recs)]
