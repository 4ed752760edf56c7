"""``function_call``: the row's functions go to an API model as tools (BFCLV3FunctionCallInferencer); the calls it
returns are the prediction."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from promptweave.forms.base import DatasetPlan, Form
from promptweave.infer.failure import RowFailure


class FunctionCallForm(Form):
    name = "function_call"
    stand_ins = ("api",)  # tools need an API model

    def dataset_settings(self, p: DatasetPlan) -> dict[str, Any]:
        from promptweave.infer.function_call import check_category

        check_category(p.raw, file=p.file, where=f"datasets[{p.i}]")  # BFCL rows carry their messages and tools
        return {"rows": {k: p.ds.test[k] for k in p.todo} if p.load_data else {}, "file": p.file}

    def check_model(self, mcfg: Any, *, file: str | None, where: str) -> None:
        from promptweave.infer.function_call import check_model

        check_model(mcfg, file=file, where=where)  # an OpenAI-compatible API model
        super().check_model(mcfg, file=file, where=where)

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        from promptweave.infer.function_call import infer_function_calls

        by_index: dict[int, Any] = {}
        for r in records:
            by_index.setdefault(r.index, r)
        rows = task.settings.get("rows") or {}
        got = infer_function_calls(model, {r.index: rows[r.index] for r in by_index.values()}, task.params, cache,
                                   progress, file=task.settings.get("file"))
        out: list[dict[str, Any]] = []
        for k, r in by_index.items():
            req, pred = got[k]
            row = {"index": k, "prompt": req.to_json(), "shot_ids": list(r.shot_ids or []), "gold": task.gold(r)}
            if isinstance(pred, RowFailure):
                row.update(output=None, prediction=None, error=pred.to_json())
            else:
                row.update(output=pred, prediction=pred)
            out.append(row)
        return out


FORM = FunctionCallForm()
