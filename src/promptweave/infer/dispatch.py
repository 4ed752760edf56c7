"""Sending calls to a model through the response cache: only calls with no cached answer are sent."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from promptweave.errors import ModelError
from promptweave.infer.cache import ResponseCache, request_key
from promptweave.infer.failure import RowFailure
from promptweave.infer.records import to_jsonable
from promptweave.infer.score_values import compact, usable
from promptweave.models.base import (
    GenerationParams,
    backend_batch_size,
    backend_identity,
    backend_identity_name,
    backend_name,
    capabilities_of,
)


def model_identity(model: Any, cache: ResponseCache | None = None) -> dict[str, Any]:
    """The model's own identity (``identity()``), plus its configured name and class.

    A model with an ``identity_fingerprint()`` (a local transformers model) has its identity kept in
    ``cache`` under that fingerprint: a rerun reads it back instead of loading the tokenizer (and torch).
    """
    memo = None
    if isinstance(cache, ResponseCache) and capabilities_of(model).identity_memo:
        fp = model.identity_fingerprint()
        name = backend_identity_name(model)
        memo = request_key({"fingerprint": fp}, "identity", [name, type(model).__name__]) if fp else None
        got = cache.recall(memo) if memo else None
        if isinstance(got, dict) and got.get("name") == name and "backend" in got:
            return got
    ident = backend_identity(model)
    if memo is not None and isinstance(cache, ResponseCache):
        cache.remember(memo, ident)
    return ident


def is_remote(model: Any) -> bool:
    """Remote (HTTP) backends send concurrently through ``run_batch``; local ones in batches."""
    return capabilities_of(model).remote


_REMOTE_KIND = {"generate": "complete", "chat": "chat", "score": "score"}


def _as_text(rendered: Any) -> str:
    if isinstance(rendered, str):
        return rendered
    if all(isinstance(s, str) for s in rendered):
        return "".join(rendered)
    raise ModelError("this prompt holds token ids, which an HTTP text endpoint cannot take; render it as text "
                     "for API models", field="rendered", value=rendered)


class CachedCaller:
    """Calls one model, reading and writing the response cache; ``progress(n)`` is told of finished calls."""

    def __init__(self, model: Any, cache: ResponseCache | None = None,
                 progress: Callable[[int], None] | None = None, *, row_errors: bool = False) -> None:
        self.model = model
        self.row_errors = row_errors
        self.cache = cache
        self.progress = progress or (lambda n: None)
        self.identity = model_identity(model, cache)
        self.name = backend_name(model)
        self.sent = 0
        self.failed = 0

    def key(self, kind: str, request: Any, params: GenerationParams | None) -> str:
        return request_key(self.identity, kind, to_jsonable(request), params)

    def call(self, kind: str, requests: Sequence[Any], params: GenerationParams | None = None,
             groups: Sequence[Sequence[int]] | None = None, *, summed: bool = False) -> list[Any]:
        """Answer each request; ``kind`` is generate / chat / score / next_token.

        ``groups`` (score only) lists request indices that share a prefix (the labels
        of one PPL row); a local model scores each group from one shared context.
        ``summed`` (score only): answers, and what is cached, are compact sums (``score_values``).
        With ``row_errors``, a request that failed on its own (HTTP backends) answers with a
        :class:`RowFailure`, which is not cached; without it the error is raised.
        """
        keys = [self.key(kind, r, params) for r in requests]
        found = self.cache.get_many(keys) if self.cache is not None else {}
        if kind == "score":
            found = {k: (compact(v) if summed else v) for k, v in found.items() if usable(v, summed)}
        results: list[Any] = [None] * len(requests)
        by_key: dict[str, list[int]] = {}
        for i, k in enumerate(keys):
            if k in found:
                results[i] = found[k]
            else:
                by_key.setdefault(k, []).append(i)
        if len(requests) - sum(len(v) for v in by_key.values()):
            self.progress(len(requests) - sum(len(v) for v in by_key.values()))
        todo = [v[0] for v in by_key.values()]  # one call per distinct request
        if not todo:
            return results

        def store(idx: Sequence[int], values: Sequence[Any]) -> None:
            if summed:
                values = [compact(v) for v in values]
            rows = []
            done = 0
            for i, v in zip(idx, values):
                k = keys[i]
                for j in by_key[k]:
                    results[j] = v
                done += len(by_key[k])
                rows.append((k, self.name, kind, to_jsonable(requests[i]), v))
            if self.cache is not None:
                self.cache.put_many(rows)
            self.sent += len(idx)
            self.progress(done)

        if is_remote(self.model):
            if kind not in _REMOTE_KIND:
                raise ModelError(f"'{kind}' scoring needs a local model; HTTP backends support gen and ppl",
                                 field="model", value=self.name)
            items = [requests[i] if kind == "chat" else _as_text(requests[i]) for i in todo]
            remote_kind = _REMOTE_KIND[kind]
            if kind == "generate" and capabilities_of(self.model).chat_endpoint:
                remote_kind = "chat"  # a chat-only server gets a text prompt as one user message
            def failed(j: int, exc: Exception) -> None:
                fault = RowFailure.of(exc)
                for i in by_key[keys[todo[j]]]:
                    results[i] = fault
                self.failed += 1
                self.progress(len(by_key[keys[todo[j]]]))

            deliver: dict[str, Any] = {"on_result": lambda j, v: store([todo[j]], [v])}
            if capabilities_of(self.model).result_bursts:  # answers that arrive together, stored in one write
                deliver = {"on_results": lambda pairs: store([todo[j] for j, _ in pairs], [v for _, v in pairs])}
            self.model.run_batch(remote_kind, items, params, on_error=failed if self.row_errors else None,
                                 **deliver)
            return results
        self._call_local(kind, requests, params, todo, groups, store)
        return results

    def _store_groups(self, batch: list[list[int]], requests: Sequence[Any], store: Callable[..., None]) -> None:
        scores = self.model.token_logprobs_groups([[requests[i] for i in idx] for idx in batch])
        store([i for idx in batch for i in idx], [v for group in scores for v in group])

    def _call_local(self, kind: str, requests: Sequence[Any], params: GenerationParams | None, todo: list[int],
                    groups: Sequence[Sequence[int]] | None, store: Callable[..., None]) -> None:
        model = self.model
        bs = backend_batch_size(model)
        caps = capabilities_of(model)
        if caps.planned_batches:  # the model forms its batches by token length (models/hf.py)
            self._call_planned(kind, requests, params, todo, groups, store)
            return
        if kind == "score" and groups is not None:
            pending = set(todo)
            batch: list[list[int]] = []
            for group in groups:
                idx = [i for i in group if i in pending]
                if not idx:
                    continue
                pending.difference_update(idx)
                if not caps.grouped_scores:
                    store(idx, model.token_logprobs([requests[i] for i in idx], shared_prefix=True))
                    continue
                batch.append(idx)
                if sum(len(b) for b in batch) >= bs:
                    self._store_groups(batch, requests, store)
                    batch = []
            if batch:
                self._store_groups(batch, requests, store)
            rest = [i for i in todo if i in pending]
            for s in range(0, len(rest), bs):
                chunk = rest[s:s + bs]
                store(chunk, model.token_logprobs([requests[i] for i in chunk], shared_prefix=False))
            return
        for s in range(0, len(todo), bs):
            chunk = todo[s:s + bs]
            items = [requests[i] for i in chunk]
            if kind == "generate":
                out = model.generate(items, params or GenerationParams())
            elif kind == "chat":
                out = model.chat(items, params or GenerationParams())
            elif kind == "score":
                out = model.token_logprobs(items, shared_prefix=False)
            elif kind == "next_token":
                if all(list(ids) == list(items[0][1]) for _, ids in items):
                    out = model.next_token_logprobs([p for p, _ in items], items[0][1])
                else:
                    out = [model.next_token_logprobs([p], ids)[0] for p, ids in items]
            else:
                raise ValueError(kind)
            store(chunk, out)


    def _call_planned(self, kind: str, requests: Sequence[Any], params: GenerationParams | None, todo: list[int],
                      groups: Sequence[Sequence[int]] | None, store: Callable[..., None]) -> None:
        """Every pending request in the model's own batches; each batch is stored (and its progress told) as
        soon as it is answered, so a crash loses one batch at most."""
        model = self.model
        rest = todo
        if kind == "score" and groups is not None:
            pending = set(todo)
            grouped: list[list[int]] = []
            for group in groups:
                idx = [i for i in group if i in pending]
                if idx:
                    pending.difference_update(idx)
                    grouped.append(idx)
            for where, run in model.plan_group_calls([[requests[i] for i in idx] for idx in grouped]):
                got = run()
                store([i for g in where for i in grouped[g]], [v for scores in got for v in scores])
            rest = [i for i in todo if i in pending]
        if not rest:
            return
        for where, run in model.plan_calls(kind, [requests[i] for i in rest], params):
            store([rest[k] for k in where], run())


class SampleCaller(CachedCaller):
    """Sample ``k`` > 0 of a request is a cache key of its own (``<key>:<tag><k>``), so n identical requests are
    n calls; sample 0 shares the plain key. ``tag`` keeps one inferencer's samples apart from another's."""

    def __init__(self, *args: Any, sample: int, tag: str, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.sample = sample
        self.tag = tag

    def key(self, kind: str, request: Any, params: GenerationParams | None) -> str:
        base = super().key(kind, request, params)
        return base if self.sample == 0 else f"{base}:{self.tag}{self.sample}"
