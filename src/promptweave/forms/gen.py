"""``gen``: one generation per row (GenInferencer and its kin); the reply, postprocessed, is the prediction."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from promptweave.forms.base import DatasetPlan, Form
from promptweave.infer import infer_gen
from promptweave.infer.failure import RowFailure
from promptweave.infer.records import columns_of, to_jsonable
from promptweave.work.out_len import row_max_out_lens
from promptweave.work.task import Task

ROW_OUT_LEN = "row_max_out_len"  # task.settings key: row index -> that row's max_out_len (work/out_len.py)


class GenForm(Form):
    name = "gen"
    prompt_cut = "output"
    columnar = True

    def model_task(self, p: DatasetPlan, j: int, mspec: Any, params: Any, evaluation: Any,
                   extra: dict[str, Any]) -> Task:
        task = super().model_task(p, j, mspec, params, evaluation, extra)
        if p.load_data:
            lens = row_max_out_lens(mspec.config, p.ds.reader.input_columns, p.ds.test, p.todo, file=p.file,
                                    where=f"datasets[{p.i}].test")
            if lens:
                task.settings = {**task.settings, ROW_OUT_LEN: lens}
        return task

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        ev = task.evaluation
        out: list[dict[str, Any]] = []
        for g in _generate(task, records, model, cache, progress):
            row = {"index": g.index, "prompt": to_jsonable(g.prompt), "shot_ids": g.shot_ids}
            if isinstance(g.output, RowFailure):
                row.update(output=None, prediction=None, gold=gold(g.index), error=g.output.to_json())
            else:
                row.update(output=g.output, prediction=ev.process_prediction(g.output), gold=gold(g.index))
            out.append(row)
        return out


def _generate(task: Any, records: Sequence[Any], model: Any, cache: Any,
              progress: Callable[[int], None] | None) -> list[Any]:
    """The batch's generations; rows that ask for their own length go in one call per length, in row order."""
    lens = (getattr(task, "settings", None) or {}).get(ROW_OUT_LEN)
    if not lens:
        return infer_gen(model, records, task.params, cache, progress)
    cols = columns_of(records)
    indices = list(cols[0]) if cols is not None else [r.index for r in records]
    if not any(i in lens for i in indices):
        return infer_gen(model, records, task.params, cache, progress)
    items = list(records)
    groups: dict[int, list[int]] = {}
    for pos, i in enumerate(indices):
        groups.setdefault(lens.get(i, task.params.max_out_len), []).append(pos)
    got: list[Any] = [None] * len(items)
    for length, where in groups.items():
        for pos, g in zip(where, infer_gen(model, [items[k] for k in where],
                                           replace(task.params, max_out_len=length), cache, progress)):
            got[pos] = g
    return got


FORM = GenForm()
