"""``clp``: the next-token probability of each choice after the generation prompt (CLPInferencer)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from promptweave.forms.base import Form
from promptweave.infer import infer_clp
from promptweave.infer.records import to_jsonable


class CLPForm(Form):
    name = "clp"
    prompt_cut = "whole"
    build_mode = "gen"  # the next token after the generation prompt
    eval_mode = "ppl"
    scoring = True
    stand_ins = ("lm",)
    columnar = True
    choices_from_labels = True

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        return [{"index": c.index, "prompt": to_jsonable(c.prompt), "shot_ids": c.shot_ids,
                 "output": c.probs, "prediction": c.prediction, "gold": gold(c.index)}
                for c in infer_clp(model, records, task.choices, cache, progress)]


FORM = CLPForm()
