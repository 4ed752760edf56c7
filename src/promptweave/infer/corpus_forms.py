"""Planning and prediction rows of the corpus-loss forms (``inference_ppl``, ``sw_ce_loss``).

Both take no answer column (the reference asserts ``output_column=None``). Inference-PPL reads each row's
``label`` spans; the sliding window reads the whole corpus at once (its windows cross rows), so its rows are
computed on the first batch and handed out batch by batch.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from promptweave.errors import DataError, UnsupportedError
from promptweave.infer.cache import ResponseCache
from promptweave.infer.local_lm import CORPUS_FORMS
from promptweave.infer.records import to_jsonable


def plan_settings(mode: str, ds: Any, todo: Sequence[int], settings: Mapping[str, Any], output: Any, *,
                  load_data: bool, file: str | None, where: str) -> dict[str, Any]:
    """What the form needs beyond the prompts, checked at plan time (errors name the file and field)."""
    if output is not None:
        raise UnsupportedError(f"{CORPUS_FORMS[mode]} scores the prompts themselves and takes no answer column (as "
                               "the reference asserts)", file=file, field=f"{where}.reader_cfg.output_column",
                               value=output, expected="output_column=None")
    if mode == "sw_ce_loss":
        from promptweave.infer.sw_ce_loss import check_settings

        block, stride = check_settings(settings, file=file, where=f"{where}.infer_cfg.inferencer")
        return {"block_size": block, "stride": stride}
    labels: dict[int, Any] = {}
    for k in (todo if load_data else ()):
        row = ds.test[k]
        if "label" not in row:
            raise DataError("InferencePPLOnlyInferencer counts the tokens inside each row's 'label' spans, which "
                            "this row lacks", file=getattr(ds, "file", None) or file, field=f"{where}.test[{k}].label",
                            expected="a 'label' column: a list of [start, end, 1] character spans of the prompt")
        labels[k] = row["label"]
    return {"labels": labels}


def corpus_rows(task: Any, model: Any, cache: ResponseCache | None,
                progress: Callable[[int], None] | None) -> list[dict[str, Any]]:
    """Prediction rows for this batch of the task's records, with the reference's record fields."""
    out: list[dict[str, Any]] = []
    if task.mode == "inference_ppl":
        from promptweave.infer.inference_ppl import infer_inference_ppl

        for r in infer_inference_ppl(model, task.records, task.settings.get("labels") or {}, cache, progress):
            rec = {"ppl": r.ppl, "token_len": r.token_len}
            out.append({"index": r.index, "prompt": to_jsonable(r.prompt), "shot_ids": r.shot_ids, **rec,
                        "output": rec, "prediction": rec, "gold": None})
        return out
    from promptweave.infer.sw_ce_loss import infer_sw_ce_loss

    done = task.settings.setdefault("_rows", {})  # the task's settings dict outlives its batches
    if not done:
        corpus = task.settings.get("corpus")
        for w in infer_sw_ce_loss(model, corpus if corpus is not None else task.records,
                                  int(task.settings["block_size"]), int(task.settings["stride"]), cache, progress):
            rec = {"loss": w.loss, "total_chr_num": w.total_chr_num}
            done[w.index] = {"index": w.index, "prompt": to_jsonable(w.prompt), "shot_ids": w.shot_ids, **rec,
                             "scored_tokens": w.scored_tokens, "output": rec, "prediction": rec, "gold": None}
    seen: set[int] = set()
    for r in task.records:
        if r.index not in seen:
            seen.add(r.index)
            out.append(done[r.index])
    return out
