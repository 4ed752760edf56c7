"""``sc``: self-consistency (SCInferencer): ``sc_size`` sampled generations per row, majority vote over the
postprocessed answers."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from promptweave.forms.base import DatasetPlan, Form
from promptweave.infer.records import to_jsonable


class SCForm(Form):
    name = "sc"
    prompt_cut = "output"

    def dataset_settings(self, p: DatasetPlan) -> dict[str, Any]:
        return {"sc_size": int(p.settings.get("sc_size", 1))}

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        from promptweave.infer.sc import infer_sc

        records = list(records)
        by_index: dict[int, Any] = {}
        for r in records:
            by_index.setdefault(r.index, r)
        return [{"index": s.index, "prompt": to_jsonable(s.prompt), "shot_ids": s.shot_ids, "output": s.samples,
                 "samples": s.processed, "prediction": s.prediction, "gold": task.gold(by_index[s.index])}
                for s in infer_sc(model, records, task.params, int(task.settings.get("sc_size", 1)),
                                  task.evaluation.process_prediction, cache, progress)]


FORM = SCForm()
