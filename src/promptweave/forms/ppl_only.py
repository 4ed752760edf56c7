"""``ppl_only``: each prompt's perplexity is the prediction (PPLOnlyInferencer); no answer column."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from promptweave.errors import UnsupportedError
from promptweave.forms.base import DatasetPlan, Form
from promptweave.infer.records import to_jsonable


class PPLOnlyForm(Form):
    name = "ppl_only"
    build_mode = "ppl"
    eval_mode = "ppl"
    scoring = True
    stand_ins = ("lm",)

    def dataset_settings(self, p: DatasetPlan) -> dict[str, Any]:
        if p.output is not None:
            raise UnsupportedError("PPLOnlyInferencer scores whole prompts and takes no answer column (as the "
                                   "reference asserts)", file=p.file, field=f"datasets[{p.i}].reader_cfg.output_column",
                                   value=p.output, expected="output_column=None")
        return {}

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        from promptweave.infer.ppl_only import infer_ppl_only

        records = list(records)
        by_index: dict[int, Any] = {}
        for r in records:
            by_index.setdefault(r.index, r)
        return [{"index": p.index, "prompt": to_jsonable(p.prompt), "shot_ids": p.shot_ids, "output": p.ppl,
                 "prediction": p.ppl, "gold": task.gold(by_index[p.index])}
                for p in infer_ppl_only(model, records, cache, progress)]


FORM = PPLOnlyForm()
