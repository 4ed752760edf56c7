"""Multi-turn tasks in a run: per-turn prediction rows and their scores.

The conversation loop (and every model call through the response cache) lives in
:mod:`promptweave.forms.turn_loop`; this module only calls it and turns its
results into rows, so a task's rows can be produced shard by shard (any row
range, on any worker) and scored once on the merged rows.

A failed request ends its conversation only; it is recorded with its error,
and the turns after it as not sent. A rejection no request can get past (HTTP
401 / 403 / 404: key or model wrong) stops the task instead.
"""
from __future__ import annotations

import copy
from collections import OrderedDict
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from promptweave.forms.base import DatasetPlan, Form, score_settings
from promptweave.forms.turn_loop import FATAL_STATUS, CachedGenerate, ConversationResult
from promptweave.infer.records import to_jsonable
from promptweave.work.output import jsonl, write_atomic
from promptweave.work.task import Task

__all__ = ["FATAL_STATUS", "FORM", "CachedGenerate", "multiturn_rows", "multiturn_scores", "run_multiturn", "score_turns"]


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
    if getattr(evaluation.evaluator, "scores_conversations", False):
        return _score_conversations(rows, evaluation)
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


def _score_conversations(rows: Sequence[dict[str, Any]], evaluation: Any) -> dict[str, float]:
    """AISBench's evaluation of a multi-turn set (its evaluator says ``scores_conversations``): one prediction per
    conversation, its first reply, judged against the conversation's whole gold column (every turn's gold)."""
    convs: "OrderedDict[int, list[dict[str, Any]]]" = OrderedDict()
    for r in rows:
        convs.setdefault(r["index"], []).append(r)
    preds, golds = [], []
    for turns in convs.values():
        turns.sort(key=lambda r: r["turn_id"])
        first = turns[0]
        preds.append(first["prediction"] if first["success"] else "")
        golds.append([evaluation.process_gold(r["gold"]) for r in turns])
    scores = evaluation.score(preds, golds)
    for turns, ok in zip(convs.values(), scores.correct):
        for r in turns:
            r["correct"] = bool(ok)
    return dict(scores.metrics)


def multiturn_rows(task: Task, model: Any, cache: Any,
                   progress: Callable[[int], None] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per-turn rows (unscored) for the task's conversations, and what scoring needs besides them."""
    inf = copy.copy(task.multiturn)
    results = inf.run_cached(model, cache, task.params, [r.index for r in task.records], progress)
    rows = _turn_rows(task, results)
    if progress is not None:
        answered = sum(t.success for c in results for t in c.turns)
        if task.calls > answered:
            progress(task.calls - answered)  # failed and unsent turns still close the bar
    failed = [{"index": c.turns[-1].index, "turn_id": c.turns[-1].turn_id, "error": c.turns[-1].error}
              for c in results if c.turns and not c.complete]
    return rows, {"infer_mode": inf.infer_mode, "failed_conversations": failed}


def multiturn_scores(task: Task, rows: list[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """Score all of a task's rows (in row order) once: the result's extra fields."""
    metrics = score_turns(rows, task.evaluation, per=task.score_per, reduce=task.conversation_reduce)
    return {"infer_mode": meta["infer_mode"], "score_per": task.score_per,
            "conversation_reduce": task.conversation_reduce, "turns": len(rows), "metrics": metrics,
            "failed_conversations": list(meta["failed_conversations"])}


def run_multiturn(task: Task, model: Any, cache: Any,
                  progress: Callable[[int], None] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run a multi-turn task: per-turn prediction rows (scored) and the result's extra fields."""
    rows, meta = multiturn_rows(task, model, cache, progress)
    return rows, multiturn_scores(task, rows, meta)


class MultiTurnForm(Form):
    """MultiTurnGenInferencer: one record per conversation; its prompts are built as the replies come in, and its
    turns are scored per turn (``score_per`` / ``conversation_reduce`` in ``eval_cfg`` choose the headline)."""

    name = "multiturn"
    shared_index = False  # a conversation's prompts are built on the worker as replies come in

    def plan(self, p: DatasetPlan) -> list[Task]:
        from promptweave.evaluate import build_evaluation
        from promptweave.forms.turn_loop import MultiTurnGenInferencer
        from promptweave.models.factory import generation_params
        from promptweave.work.out_len import model_max_out_len
        from promptweave.work.task import ConversationRecord

        n = p.n if p.load_data else 0  # a conversation's turns come from real rows
        rows = None if p.rows is None else p.todo
        where = f"datasets[{p.i}].eval_cfg"
        eval_cfg, score = score_settings(p.raw.get("eval_cfg"), multiturn=True, where=where)
        evaluation = build_evaluation(eval_cfg, mode="gen", allow_code=p.allow_code, where=where)
        settings = p.settings
        tasks = []
        for _j, mspec in zip(p.model_ids, p.specs):
            mcfg = mspec.config
            params = generation_params(mcfg, max_out_len=model_max_out_len(mcfg) or settings.get("max_out_len"),
                                       stop=settings.get("stopping_criteria"))
            inf = MultiTurnGenInferencer(p.ds, mspec, params=params)
            records = [ConversationRecord(k, inf.template.n_requests(inf.conversation(k), inf.infer_mode))
                       for k in (range(n) if rows is None else rows)]
            tasks.append(Task(dataset=p.ds.abbr, model_name=mspec.abbr,
                              make_model=partial(p.make_model, mcfg),
                              records=records, mode=self.name, params=params, evaluation=evaluation,
                              multiturn=inf, score_per=score.get("score_per", "turn"),
                              conversation_reduce=score.get("conversation_reduce", "all")))
        return tasks

    def run_task(self, task: Task, model: Any, cache: Any, progress: Callable[[int], None] | None, ppath: Path,
                 workdir: Path, on_row_error: str) -> tuple[dict[str, Any], int]:
        rows, extra = run_multiturn(task, model, cache, progress)
        write_atomic(ppath, "".join(jsonl(r) for r in rows), root=workdir)
        return extra, task.rows

    def infer_rows(self, task: Task, model: Any, cache: Any,
                   progress: Callable[[int], None] | None) -> tuple[list[dict[str, Any]], dict]:
        return multiturn_rows(task, model, cache, progress)

    def empty_meta(self, task: Task) -> dict:
        return {"infer_mode": task.multiturn.infer_mode, "failed_conversations": []}

    def score_rows(self, task: Task, rows: list[dict[str, Any]], meta: dict) -> dict[str, Any]:
        return multiturn_scores(task, rows, meta)

    def count_prompts(self, task: Task, cfg: Any, opened: dict, no_data: bool) -> int:
        if no_data:
            return len(task.records)
        from promptweave.engine.open import open_model
        from promptweave.forms.turn_loop import turn_prompts

        spec = next(s for s in opened.values() if s.abbr == task.dataset)
        m = open_model(cfg, cfg.model_abbrs().index(task.model_name))
        return sum(len(turn_prompts(spec, m, r.index)) for r in task.records)


FORM = MultiTurnForm()
