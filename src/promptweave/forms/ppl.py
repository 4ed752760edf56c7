"""``ppl``: each label's prompt scored by perplexity (PPLInferencer); the lowest is the prediction."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from promptweave.forms.base import Form
from promptweave.infer import infer_ppl
from promptweave.infer.records import to_jsonable


class PPLForm(Form):
    name = "ppl"
    build_mode = "ppl"
    eval_mode = "ppl"
    scoring = True
    stand_ins = ("lm",)
    columnar = True
    labels_per_row = True

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for p in infer_ppl(model, records, cache, progress, normalizing_str=task.normalizing_str):
            row = {"index": p.index, "prompt": {str(k): to_jsonable(v) for k, v in p.prompts.items()},
                   "shot_ids": p.shot_ids, "output": {str(k): v for k, v in p.ppl.items()} if p.error is None
                   else None, "prediction": p.prediction, "gold": gold(p.index)}
            if p.error is not None:
                row["error"] = p.error.to_json()
            out.append(row)
        return out


FORM = PPLForm()
