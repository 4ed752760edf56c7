"""``gen``: one generation per row (GenInferencer and its kin); the reply, postprocessed, is the prediction."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from promptweave.forms.base import Form
from promptweave.infer import infer_gen
from promptweave.infer.failure import RowFailure
from promptweave.infer.records import to_jsonable


class GenForm(Form):
    name = "gen"
    prompt_cut = "output"
    columnar = True

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        ev = task.evaluation
        out: list[dict[str, Any]] = []
        for g in infer_gen(model, records, task.params, cache, progress):
            row = {"index": g.index, "prompt": to_jsonable(g.prompt), "shot_ids": g.shot_ids}
            if isinstance(g.output, RowFailure):
                row.update(output=None, prediction=None, gold=gold(g.index), error=g.output.to_json())
            else:
                row.update(output=g.output, prediction=ev.process_prediction(g.output), gold=gold(g.index))
            out.append(row)
        return out


FORM = GenForm()
