"""Prediction rows of a ToTInferencer task, in the shape ``run.execute`` writes for every form.

``output`` is what the reference records as the prediction: the kept candidates after the last step, best
first. The reference then scores that list as one prediction, which its Game of 24 evaluator cannot read (it
fails on a list); here the best candidate, postprocessed, is the ``prediction`` that is scored, and every
candidate's postprocessed form is kept in ``candidates``. ``search`` records each step as the reference logs it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from promptweave.forms.base import DatasetPlan, Form
from promptweave.infer.cache import ResponseCache
from promptweave.infer.records import to_jsonable
from promptweave.infer.tot import infer_tot


def tot_rows(task: Any, records: Sequence[Any], model: Any, cache: ResponseCache | None,
             progress: Callable[[int], None] | None) -> list[dict[str, Any]]:
    by_index = {r.index: r for r in records}
    ev = task.evaluation
    settings = task.settings
    out: list[dict[str, Any]] = []
    for res in infer_tot(model, records, task.params, settings["tot"], settings["wrapper"], cache, progress,
                         known=settings.setdefault("known", {}), seed=task.params.seed or 0):
        row = {"index": res.index, "prompt": to_jsonable(res.prompt), "shot_ids": res.shot_ids,
               "gold": task.gold(by_index[res.index])}
        if res.error is not None:
            row.update(output=None, prediction=None, error=res.error.to_json(), search=res.steps)
        else:
            candidates = [ev.process_prediction(y) for y in res.answers]
            row.update(output=res.answers, prediction=candidates[0] if candidates else "", candidates=candidates,
                       search=res.steps)
        out.append(row)
    return out


class ToTForm(Form):
    """ToTInferencer: a breadth-first tree-of-thought search per row (``infer/tot.py``); planned with the attack
    form in ``forms/search_plan.py``."""

    name = "tot"

    def plan_models(self, p: DatasetPlan) -> list:
        from promptweave.forms.search_plan import search_tasks

        return search_tasks(p.cfg, p.ds, p.raw, p.i, self.name, p.todo, p.golds, p.model_ids, p.specs, p.make_model,
                            p.allow_code, p.load_data, p.counters, p.where)

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        return tot_rows(task, records, model, cache, progress)


FORM = ToTForm()
