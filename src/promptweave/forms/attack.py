"""Running an AttackInferencer task: every prompt of ``original_prompt_list`` scored, ranked and logged.

Each prompt's rows go through the ordinary generation path and response cache (a rerun sends only what is
missing). Its answers are postprocessed with the eval config's ``pred_postprocessor`` and scored by its
evaluator against the raw gold answers, as the reference's ``AttackInferencer.predict`` does. Written:

- ``predictions/<model>/<dataset>.jsonl``: every row of every prompt, with its ``prompt_id``;
- ``results/<model>/<dataset>.json``: the best prompt's metrics as the headline, and ``prompt_selection``: each
  prompt (ranked) with its metrics and its 0-1 score;
- ``attack/<model>/<dataset>_attacklog.txt``: the reference's ``attacklog.txt`` lines for the ranked prompts.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from promptweave.forms.base import DatasetPlan, Form
from promptweave.infer import infer_gen
from promptweave.infer.cache import ResponseCache
from promptweave.infer.failure import RowFailure
from promptweave.infer.records import to_jsonable
from promptweave.work.batches import ROWS_PER_BATCH, batches
from promptweave.work.output import failure_summary, safe_name, write_atomic


def attacklog_path(workdir: Path, task: Any) -> Path:
    return workdir / "attack" / safe_name(task.model_name) / f"{safe_name(task.dataset)}_attacklog.txt"


def run_attack(task: Any, model: Any, cache: ResponseCache, progress: Callable[[int], None] | None,
               ppath: Path, workdir: Path, on_row_error: str) -> tuple[dict[str, Any], int]:
    from promptweave.infer.attack import prompt_score, rank, selection_log

    attack = task.settings["attack"]
    ev = task.evaluation
    where = ev.where.rsplit(".eval_cfg", 1)[0] + ".infer_cfg.inferencer" if ".eval_cfg" in ev.where else "inferencer"
    lines: list[str] = []
    board: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    n_rows = 0
    for k, (prompt, records) in enumerate(zip(attack.prompts, task.records.variants)):
        rows: list[dict[str, Any]] = []
        for batch in batches(records, ROWS_PER_BATCH):
            by_index = {r.index: r for r in batch}
            for g in infer_gen(model, batch, task.params, cache, progress):
                row = {"index": g.index, "prompt_id": k, "prompt": to_jsonable(g.prompt), "shot_ids": g.shot_ids,
                       "gold": task.gold(by_index[g.index])}
                if isinstance(g.output, RowFailure):
                    row.update(output=None, prediction=None, error=g.output.to_json())
                    errors.append(row["error"])
                else:
                    row.update(output=g.output, prediction=ev.process_prediction(g.output))
                rows.append(row)
        n_rows = max(n_rows, len(rows))
        keep = [r for r in rows if "error" not in r] if on_row_error != "wrong" else rows
        metrics: dict[str, Any] = {}
        if keep:
            ctx = ev.context([r["index"] for r in keep], prompts=[r["prompt"] for r in keep], cache=cache,
                             workdir=workdir)
            scores = ev.score(["" if "error" in r else r["prediction"] for r in keep], [r["gold"] for r in keep],
                              ctx)
            metrics = dict(scores.metrics)
            for r, ok in zip(keep, scores.correct):
                r["correct"] = None if ok is None else bool(ok) and "error" not in r
        board.append({"prompt_id": k, "prompt": prompt, "metrics": metrics,
                      "score": prompt_score(metrics, attack.metric_key, where=where) if keep else 0.0})
        lines += [json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows]
    write_atomic(ppath, "".join(lines), root=workdir)
    ranked_pairs = rank([(b["prompt"], b["score"]) for b in board])
    order = sorted(range(len(board)), key=lambda n: board[n]["score"], reverse=True)
    ranked = [dict(board[n], rank=r + 1) for r, n in enumerate(order)]
    log = attacklog_path(workdir, task)
    write_atomic(log, selection_log(ranked_pairs), root=workdir)
    extra: dict[str, Any] = {"metrics": dict(ranked[0]["metrics"]) if ranked else {},
                             "prompt_selection": {"adv_key": attack.adv_key, "metric_key": attack.metric_key,
                                                  "best_prompt_id": ranked[0]["prompt_id"] if ranked else None,
                                                  "prompts": ranked, "log": str(log)}}
    if errors:
        extra.update(failed_rows=len(errors), on_row_error=on_row_error, row_errors=failure_summary(errors))
    return extra, n_rows


class AttackForm(Form):
    """AttackInferencer: PromptBench's prompt selection; each prompt of ``original_prompt_list`` scored on the whole
    dataset, ranked and logged (the task runs whole: it writes its own log)."""

    name = "attack"

    def plan_models(self, p: DatasetPlan) -> list:
        from promptweave.forms.search_plan import search_tasks

        return search_tasks(p.cfg, p.ds, p.raw, p.i, self.name, p.todo, p.golds, p.model_ids, p.specs, p.make_model,
                            p.allow_code, p.load_data, p.counters, p.where)

    def run_task(self, task: Any, model: Any, cache: Any, progress: Callable[[int], None] | None, ppath: Path,
                 workdir: Path, on_row_error: str) -> tuple[dict[str, Any], int]:
        return run_attack(task, model, cache, progress, ppath, workdir, on_row_error)

    def view_dataset(self, spec: Any) -> tuple[Any, str | None]:
        from promptweave.infer.attack import first_prompt_spec

        return first_prompt_spec(spec)


FORM = AttackForm()
