"""Executing tasks: inference through the cache, scoring, and writing predictions and results."""
from __future__ import annotations

import gc
import json
import os
import re
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

from promptweave.errors import PromptweaveError, PromptweaveWarning
from promptweave.infer import ResponseCache, infer_clp, infer_gen, infer_ppl
from promptweave.infer.records import to_jsonable
from promptweave.run.task import Task, TaskOutcome

CACHE_FILE = "cache.sqlite"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "unnamed"


def predictions_path(workdir: Path, task: Task) -> Path:
    return workdir / "predictions" / _safe(task.model_name) / f"{_safe(task.dataset)}.jsonl"


def results_path(workdir: Path, task: Task) -> Path:
    return workdir / "results" / _safe(task.model_name) / f"{_safe(task.dataset)}.json"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _rows(task: Task, model: Any, cache: ResponseCache,
          progress: Callable[[int], None] | None) -> list[dict[str, Any]]:
    if task.settings.get("refused") is not None:  # forms hook: refused at plan time (e.g. ppl on a chat API)
        raise task.settings["refused"]
    ev = task.evaluation
    by_index = {}
    for r in task.records:
        by_index.setdefault(r.index, r)
    out: list[dict[str, Any]] = []
    if task.mode == "gen":
        for g in infer_gen(model, task.records, task.params, cache, progress):
            out.append({"index": g.index, "prompt": to_jsonable(g.prompt), "shot_ids": g.shot_ids,
                        "output": g.output, "prediction": ev.process_prediction(g.output),
                        "gold": task.gold(by_index[g.index])})
    elif task.mode == "ppl":
        for p in infer_ppl(model, task.records, cache, progress, normalizing_str=task.normalizing_str):
            out.append({"index": p.index, "prompt": {str(k): to_jsonable(v) for k, v in p.prompts.items()},
                        "shot_ids": p.shot_ids, "output": {str(k): v for k, v in p.ppl.items()},
                        "prediction": p.prediction, "gold": task.gold(by_index[p.index])})
    elif task.mode == "clp":
        for c in infer_clp(model, task.records, task.choices, cache, progress):
            out.append({"index": c.index, "prompt": to_jsonable(c.prompt), "shot_ids": c.shot_ids,
                        "output": c.probs, "prediction": c.prediction, "gold": task.gold(by_index[c.index])})
    elif task.mode in ("sc", "ll", "ppl_only"):  # forms hook: self-consistency, log-likelihood, ppl-only
        from promptweave.infer.forms import form_rows

        out = form_rows(task, model, cache, progress)
    else:
        raise PromptweaveError("unknown inference mode", field="mode", value=task.mode,
                               expected="gen, ppl, clp, sc, ll or ppl_only")
    for row in out:  # examples dropped to fit max_seq_len: keep what the retriever chose as well
        extra = getattr(by_index[row["index"]], "extra", None) or {}
        if "retrieved_ids" in extra:
            row["retrieved_ids"] = list(extra["retrieved_ids"])
    return out


# -- ray helper: shard-range execution, split out so an executor can run rows anywhere and finish the
# task once on the merged rows (execute_task below is infer_rows + finish_task, unchanged behaviour).
def infer_rows(task: Task, model: Any, cache: Any,
               progress: Callable[[int], None] | None = None) -> tuple[list[dict[str, Any]], dict | None]:
    """The task's prediction rows for its records (any row range), not yet scored.

    ``cache`` is anything with ResponseCache's ``get_many`` / ``put_many``. The second
    value is None, or (multi-turn) what :func:`finish_task` needs to score conversations.
    """
    if task.mode == "multiturn":
        from promptweave.run.multiturn import multiturn_rows

        return multiturn_rows(task, model, cache, progress)
    return _rows(task, model, cache, progress), None


def task_failed(task: Task, workdir: Path, error: str) -> TaskOutcome:
    """Record a task that could not run (its results file says why)."""
    outcome = TaskOutcome(task.dataset, task.model_name, task.mode, task.rows, error=error)
    _write_atomic(results_path(workdir, task), json.dumps(
        {"dataset": task.dataset, "model": task.model_name, "mode": task.mode, "status": "failed",
         "error": error}, indent=2, ensure_ascii=False))
    return outcome


def finish_task(task: Task, rows: list[dict[str, Any]], meta: dict | None, workdir: Path, *, cache: Any = None,
                sent: int | None = None, truncated: int = 0, rows_total: int | None = None) -> TaskOutcome:
    """Score the task's rows (all of them, in row order) and write its predictions and results."""
    outcome = TaskOutcome(task.dataset, task.model_name, task.mode, task.rows if rows_total is None else rows_total)
    if meta is not None:
        from promptweave.run.multiturn import multiturn_scores

        extra = multiturn_scores(task, rows, meta)
    else:
        # scoring (eval helper's hook): evaluators also get the test rows, prompts, the cache and the judge; a
        # scoring failure fails the task but keeps its predictions
        from promptweave.evaluate.score_rows import score_rows

        extra, error = score_rows(task.evaluation, rows, cache=cache, workdir=workdir)
        if error is not None:
            outcome.error = error
            _write_atomic(predictions_path(workdir, task),
                          "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows))
            _write_atomic(results_path(workdir, task), json.dumps(
                {"dataset": task.dataset, "model": task.model_name, "mode": task.mode, "status": "failed",
                 "error": error}, indent=2, ensure_ascii=False))
            return outcome
    lines = [json.dumps(r, ensure_ascii=False, default=str) for r in rows]
    ppath = predictions_path(workdir, task)
    _write_atomic(ppath, "".join(line + "\n" for line in lines))
    outcome.metrics = extra["metrics"]
    outcome.predictions_path = str(ppath)
    outcome.failed_conversations = len(extra.get("failed_conversations") or [])
    if sent is not None:
        outcome.sent = sent
    result = {"dataset": task.dataset, "model": task.model_name, "mode": task.mode, "status": "done",
              "rows": outcome.rows if task.mode == "multiturn" else len(rows), **extra, "predictions": str(ppath)}
    if outcome.failed_conversations:
        warnings.warn(f"{task.model_name} · {task.dataset}: {outcome.failed_conversations} conversation(s) ended "
                      "early on a failed request (recorded in the predictions); rerun the same command to retry "
                      "them", PromptweaveWarning, stacklevel=2)
    if truncated:
        result["truncated_prompts"] = truncated
        warnings.warn(f"{task.model_name} · {task.dataset}: {truncated} prompt(s) were cut from the left to fit the "
                      "model's max_seq_len", PromptweaveWarning, stacklevel=2)
    _write_atomic(results_path(workdir, task), json.dumps(result, indent=2, ensure_ascii=False))
    return outcome


def execute_task(task: Task, model: Any, workdir: Path, cache: ResponseCache,
                 progress: Callable[[int], None] | None = None) -> TaskOutcome:
    """Run one task; a model error stops this task only and is reported, finished calls stay cached."""
    sent_before = getattr(getattr(model, "stats", None), "ok", None)
    cut_before = getattr(getattr(model, "stats", None), "truncated_prompts", None)
    try:
        rows, meta = infer_rows(task, model, cache, progress)
    except PromptweaveError as exc:
        return task_failed(task, workdir, str(exc))
    sent = model.stats.ok - sent_before if sent_before is not None else None
    cut = model.stats.truncated_prompts - cut_before if cut_before is not None else 0
    return finish_task(task, rows, meta, workdir, cache=cache, sent=sent, truncated=cut)


def run_tasks(tasks: Sequence[Task], workdir: str | Path, *, limit: int | None = None, show_progress: bool = True,
              console: Any = None) -> list[TaskOutcome]:
    """Run every task (grouped by model, each model built once), writing into ``workdir``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    tasks = [t.limited(limit) for t in tasks]
    order: dict[str, list[Task]] = {}
    for t in tasks:
        order.setdefault(t.model_name, []).append(t)
    outcomes: list[TaskOutcome] = []
    with ResponseCache(workdir / CACHE_FILE) as cache, Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=console, disable=not show_progress, transient=False) as bar:
        bars = {id(t): bar.add_task(f"{t.model_name} · {t.dataset}", total=t.calls) for t in tasks}
        for name, group in order.items():
            try:
                model = group[0].make_model()
            except PromptweaveError as exc:
                outcomes.extend(TaskOutcome(t.dataset, name, t.mode, t.rows, error=str(exc)) for t in group)
                continue
            for t in group:
                bid = bars[id(t)]
                outcomes.append(execute_task(t, model, workdir, cache,
                                             lambda n, bid=bid: bar.advance(bid, n)))
            del model
            gc.collect()
    summary = [o.__dict__ for o in outcomes]
    _write_atomic(workdir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False, default=str))
    return outcomes


def summary_table(outcomes: Sequence[TaskOutcome]) -> Any:
    """A rich table of dataset × model results."""
    from rich.table import Table

    table = Table(title="promptweave results")
    for col in ("dataset", "model", "mode", "rows", "metric", "score", "status"):
        table.add_column(col, overflow="fold" if col == "metric" else "ellipsis")  # metric names stay whole
    for o in outcomes:
        if o.ok:
            status = "done" if o.complete else (f"[yellow]partial[/yellow]: {o.failed_conversations} "
                                                "conversation(s) failed")
            for metric, value in (o.metrics.items() or [("-", None)]):
                table.add_row(o.dataset, o.model, o.mode, str(o.rows), metric,
                              "-" if value is None else f"{value:.2f}", status)
        else:
            table.add_row(o.dataset, o.model, o.mode, str(o.rows), "-", "-", "[red]failed[/red] (see below)")
    return table
