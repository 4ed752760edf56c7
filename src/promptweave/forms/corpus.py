"""The corpus-loss forms, on a local transformers model only: ``inference_ppl`` (InferencePPLOnlyInferencer: the
loss of the tokens inside each row's labelled character spans) and ``sw_ce_loss`` (SWCELossInferencer: the
cross-entropy of the whole corpus through a sliding token window). Their model calls are in
``infer/corpus_forms.py``."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from promptweave.forms.base import DatasetPlan, Form


class CorpusForm(Form):
    build_mode = "ppl"
    eval_mode = "ppl"
    scoring = True
    stand_ins = ("lm",)

    def __init__(self, name: str) -> None:
        self.name = name

    def dataset_settings(self, p: DatasetPlan) -> dict[str, Any]:
        from promptweave.infer.corpus_forms import plan_settings

        return plan_settings(self.name, p.ds, p.todo, p.settings, p.output, load_data=p.load_data, file=p.file,
                             where=f"datasets[{p.i}]")

    def check_model(self, mcfg: Any, *, file: str | None, where: str) -> None:
        from promptweave.infer.local_lm import check_local_lm

        super().check_model(mcfg, file=file, where=where)
        check_local_lm(self.name, mcfg, file=file, where=where)

    def task_settings(self, extra: dict[str, Any], records: Any) -> dict[str, Any]:
        if self.name == "sw_ce_loss":  # the sliding window runs across rows: the form reads the whole corpus
            return {**extra, "corpus": records}
        return extra

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        from promptweave.infer.corpus_forms import corpus_rows

        return corpus_rows(dataclasses.replace(task, records=list(records)), model, cache, progress)  # this batch


FORM = {"inference_ppl": CorpusForm("inference_ppl"), "sw_ce_loss": CorpusForm("sw_ce_loss")}
