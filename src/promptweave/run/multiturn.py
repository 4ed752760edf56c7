"""Multi-turn tasks in a run: every model call through the response cache, predictions and scores per turn.

Conversations advance in waves (call *k* of every live conversation in one
batch, see :class:`~promptweave.infer.multiturn.MultiTurnGenInferencer`). Each
call is looked up in the response cache first, so a resumed run re-sends only
calls that never finished: in ``every`` mode call *k* holds the model's earlier
replies, which on resume come from the cache, so the request (and its key) is
the same as in the first run.

A failed request ends its conversation only; it is recorded with its error,
and the turns after it as not sent. A rejection no request can get past (HTTP
401 / 403 / 404: key or model wrong) stops the task instead.
"""
from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any, Callable, Sequence

from promptweave.errors import ModelError
from promptweave.infer import ResponseCache
from promptweave.infer.dispatch import CachedCaller
from promptweave.infer.multiturn import ConversationResult, StopRun
from promptweave.infer.records import is_messages, to_jsonable
from promptweave.models.base import GenerationParams
from promptweave.run.task import Task

FATAL_STATUS = frozenset({401, 403, 404})


class CachedGenerate:
    """A generate callable (prompts → replies) that reads and writes the response cache.

    A batch that raises is sent again one request at a time (finished calls come
    from the cache, so only unfinished ones go out again), so each failure is
    told apart and returned as that request's exception.
    """

    def __init__(self, model: Any, params: GenerationParams, cache: ResponseCache,
                 progress: Callable[[int], None] | None = None) -> None:
        self.caller = CachedCaller(model, cache, progress)
        self.cache = cache
        self.params = params
        self.progress = progress or (lambda n: None)

    def __call__(self, prompts: list[Any]) -> list[Any]:
        out: list[Any] = [None] * len(prompts)
        kinds = ["chat" if is_messages(p) else "generate" for p in prompts]
        for kind in ("chat", "generate"):
            idx = [i for i, k in enumerate(kinds) if k == kind]
            if not idx:
                continue
            try:
                got = self.caller.call(kind, [prompts[i] for i in idx], self.params)
            except Exception as exc:  # noqa: BLE001 - one request's failure must not end the others
                self._stop_if_fatal(exc)
                got = [exc] if len(idx) == 1 else self._one_by_one(kind, [prompts[i] for i in idx])
            for i, v in zip(idx, got):
                out[i] = v
        return out

    def _one_by_one(self, kind: str, prompts: Sequence[Any]) -> list[Any]:
        keys = [self.caller.key(kind, p, self.params) for p in prompts]
        found = self.cache.get_many(keys)  # finished in the failed batch (already counted by progress)
        out: list[Any] = []
        for p, key in zip(prompts, keys):
            if key in found:
                out.append(found[key])
                continue
            try:
                out.append(self.caller.call(kind, [p], self.params)[0])
            except Exception as exc:  # noqa: BLE001
                self._stop_if_fatal(exc)
                out.append(exc)
        return out

    @staticmethod
    def _stop_if_fatal(exc: BaseException) -> None:
        if isinstance(exc, ModelError) and getattr(exc, "status", None) in FATAL_STATUS:
            raise StopRun(exc.message, field=exc.field, value=exc.value) from exc


def _turn_rows(task: Task, results: list[ConversationResult]) -> list[dict[str, Any]]:
    """Per-turn rows, with the turns after a failed request recorded as not sent."""
    inf = task.multiturn
    rows: list[dict[str, Any]] = []
    for conv in results:
        for t in conv.turns:
            row = {"index": t.index, "turn_id": t.turn_id, "prompt": to_jsonable(t.prompt),
                   "output": t.prediction if t.success else None,
                   "prediction": task.evaluation.process_prediction(t.prediction) if t.success else None,
                   "gold": t.gold, "success": t.success}
            if t.error is not None:
                row["error"] = t.error
            rows.append(row)
        if conv.turns and not conv.complete:
            c = inf.conversation(conv.index)
            failed = conv.turns[-1].turn_id
            for k in range(failed + 1, inf.template.n_requests(c, inf.infer_mode)):
                rows.append({"index": conv.index, "turn_id": k, "prompt": None, "output": None, "prediction": None,
                             "gold": inf.gold(c, k), "success": False,
                             "error": f"not sent: request {failed} of this conversation failed"})
    return rows


def score_turns(rows: Sequence[dict[str, Any]], evaluation: Any, *, per: str = "turn",
                reduce: str = "all") -> dict[str, float]:
    """Percent correct per turn (all turns and each ``turn_id``) and per conversation.

    Each answer is judged by the dataset's evaluator; a failed or unsent turn is
    wrong. A conversation counts as correct when every turn is (``reduce="all"``)
    or by the share of its turns that are (``"mean"``). The headline metric
    (the evaluator's name, e.g. ``accuracy``) is the level ``per`` chooses; the
    other level is reported as ``<name>/conversation`` or ``<name>/turn``.
    """
    golds = [evaluation.process_gold(r["gold"]) for r in rows]
    scores = evaluation.score([r["prediction"] if r["success"] else "" for r in rows], golds)
    name = next(iter(scores.metrics), "accuracy")
    for r, g, ok in zip(rows, golds, scores.correct):
        r["gold"] = g
        r["correct"] = bool(ok) and r["success"]

    def pct(flags: Sequence[bool]) -> float:
        return 100.0 * sum(flags) / len(flags) if flags else 0.0

    by_turn: dict[int, list[bool]] = {}
    by_conv: "OrderedDict[int, list[bool]]" = OrderedDict()
    for r in rows:
        by_turn.setdefault(r["turn_id"], []).append(r["correct"])
        by_conv.setdefault(r["index"], []).append(r["correct"])
    turn = pct([r["correct"] for r in rows])
    conv_values = [float(all(c)) if reduce == "all" else sum(c) / len(c) for c in by_conv.values()]
    conv = 100.0 * sum(conv_values) / len(conv_values) if conv_values else 0.0
    per_turn = {f"{name}@turn{k}": pct(v) for k, v in sorted(by_turn.items())}
    if per == "conversation":
        return {name: conv, f"{name}/turn": turn, **per_turn}
    return {name: turn, **per_turn, f"{name}/conversation": conv}


def run_multiturn(task: Task, model: Any, cache: ResponseCache,
                  progress: Callable[[int], None] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run a multi-turn task: per-turn prediction rows (scored) and the result's extra fields."""
    inf = copy.copy(task.multiturn)
    indices = [r.index for r in task.records]
    inf.generate = CachedGenerate(model, task.params, cache, progress)
    inf.batch_size = max(1, len(indices))  # a wave is one batch; the caller splits it for the backend
    results = inf.run(indices)
    rows = _turn_rows(task, results)
    if progress is not None:
        answered = sum(t.success for c in results for t in c.turns)
        if task.calls > answered:
            progress(task.calls - answered)  # failed and unsent turns still close the bar
    metrics = score_turns(rows, task.evaluation, per=task.score_per, reduce=task.conversation_reduce)
    failed = [{"index": c.turns[-1].index, "turn_id": c.turns[-1].turn_id, "error": c.turns[-1].error}
              for c in results if c.turns and not c.complete]
    extra = {"infer_mode": inf.infer_mode, "score_per": task.score_per,
             "conversation_reduce": task.conversation_reduce, "turns": len(rows), "metrics": metrics,
             "failed_conversations": failed}
    return rows, extra
