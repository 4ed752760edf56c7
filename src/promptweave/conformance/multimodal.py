"""Checker for AISBench ``multimodal`` cases (MMPromptTemplate through the public builder)."""
from __future__ import annotations

import warnings
from typing import Any

from promptweave.conformance.aisbench_common import specs
from promptweave.conformance.outcome import Outcome
from promptweave.engine import PromptBuilder
from promptweave.errors import PromptweaveWarning
from promptweave.render.chat import to_openai_messages


def check(case: dict[str, Any]) -> Outcome:
    with warnings.catch_warnings():
        # compat mode drops media for text models, as the reference does; that warning is for users
        warnings.simplefilter("ignore", PromptweaveWarning)
        dataset, model = specs(case)
        builder = PromptBuilder(dataset, model, case.get("mode"))
        idx = case["test_index"]
        if builder.mode == "ppl":
            labels = case["expected"].get("labels") or builder.labels()
            recs = [builder.build(idx, lab) for lab in labels]
        else:
            recs = [builder.build(idx)]
    expected = case["expected"]
    got: dict[str, Any] = {"prompts": [r.rendered for r in recs]}
    if "messages" in expected:
        got["messages"] = [to_openai_messages(r.rendered, keep_extra_keys=True) for r in recs]
    want = {k: expected.get(k) for k in got}
    return Outcome(got == want, got, want)
