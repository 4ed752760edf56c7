"""Prediction rows for the sc / ll / ppl_only forms, in the shape ``run.execute`` writes for every form."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from promptweave.infer.cache import ResponseCache
from promptweave.infer.failure import RowFailure
from promptweave.infer.records import to_jsonable

FORMS = ("sc", "ll", "ppl_only", "function_call", "inference_ppl", "sw_ce_loss")


def form_rows(task: Any, model: Any, cache: ResponseCache | None,
              progress: Callable[[int], None] | None) -> list[dict[str, Any]]:
    by_index: dict[int, Any] = {}
    for r in task.records:
        by_index.setdefault(r.index, r)
    out: list[dict[str, Any]] = []
    if task.mode == "sc":
        from promptweave.infer.sc import infer_sc

        for s in infer_sc(model, task.records, task.params, int(task.settings.get("sc_size", 1)),
                          task.evaluation.process_prediction, cache, progress):
            out.append({"index": s.index, "prompt": to_jsonable(s.prompt), "shot_ids": s.shot_ids,
                        "output": s.samples, "samples": s.processed, "prediction": s.prediction,
                        "gold": task.gold(by_index[s.index])})
    elif task.mode == "ll":
        from promptweave.infer.ll import infer_ll

        for r in infer_ll(model, task.records, task.settings.get("cont") or {}, cache, progress):
            out.append({"index": r.index, "prompt": {str(k): to_jsonable(v) for k, v in r.prompts.items()},
                        "shot_ids": r.shot_ids, "output": {str(k): v for k, v in r.loglikelihood.items()},
                        "prediction": r.prediction, "gold": task.gold(by_index[r.index])})
    elif task.mode == "ppl_only":
        from promptweave.infer.ppl_only import infer_ppl_only

        for p in infer_ppl_only(model, task.records, cache, progress):
            out.append({"index": p.index, "prompt": to_jsonable(p.prompt), "shot_ids": p.shot_ids,
                        "output": p.ppl, "prediction": p.ppl, "gold": task.gold(by_index[p.index])})
    elif task.mode == "function_call":  # data hook: BFCL function calling
        from promptweave.infer.function_call import infer_function_calls

        rows = task.settings.get("rows") or {}
        got = infer_function_calls(model, {r.index: rows[r.index] for r in by_index.values()}, task.params, cache,
                                   progress, file=task.settings.get("file"))
        for k, r in by_index.items():
            req, pred = got[k]
            row = {"index": k, "prompt": req.to_json(), "shot_ids": list(r.shot_ids or []),
                   "gold": task.gold(r)}
            if isinstance(pred, RowFailure):
                row.update(output=None, prediction=None, error=pred.to_json())
            else:
                row.update(output=pred, prediction=pred)
            out.append(row)
    elif task.mode in ("inference_ppl", "sw_ce_loss"):  # eval hook: corpus-loss forms
        from promptweave.infer.corpus_forms import corpus_rows

        out = corpus_rows(task, model, cache, progress)
    else:
        raise ValueError(task.mode)
    return out
