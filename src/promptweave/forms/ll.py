"""``ll``: the log-likelihood of the row's ``cont`` continuation after each label's prompt (LLInferencer); the
highest wins."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from promptweave.errors import DataError
from promptweave.forms.base import DatasetPlan, Form
from promptweave.infer.records import to_jsonable


def _conts(ds: Any, todo: Sequence[int], where: str) -> dict[int, Any]:
    out = {}
    for k in todo:
        row = ds.test[k]
        if "cont" not in row:
            raise DataError("LLInferencer scores each row's 'cont' column, which this row lacks", file=ds.file,
                            field=f"{where}.test[{k}].cont", expected="a 'cont' column in the rows (list it in "
                            "reader_cfg.input_columns if the reader drops it)")
        out[k] = row["cont"]
    return out


class LLForm(Form):
    name = "ll"
    build_mode = "ppl"
    eval_mode = "ppl"
    scoring = True
    stand_ins = ("lm",)

    def dataset_settings(self, p: DatasetPlan) -> dict[str, Any]:
        return {"cont": _conts(p.ds, p.todo, f"datasets[{p.i}]") if p.load_data else {}}

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        from promptweave.infer.ll import infer_ll

        records = list(records)
        by_index: dict[int, Any] = {}
        for r in records:
            by_index.setdefault(r.index, r)
        return [{"index": r.index, "prompt": {str(k): to_jsonable(v) for k, v in r.prompts.items()},
                 "shot_ids": r.shot_ids, "output": {str(k): v for k, v in r.loglikelihood.items()},
                 "prediction": r.prediction, "gold": task.gold(by_index[r.index])}
                for r in infer_ll(model, records, task.settings.get("cont") or {}, cache, progress)]


FORM = LLForm()
