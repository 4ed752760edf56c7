"""Checker for AISBench ``multiturn`` cases: a scripted model replies, every prompt it got is compared."""
from __future__ import annotations

import warnings
from typing import Any

from promptweave.conformance.aisbench_common import specs
from promptweave.conformance.outcome import Outcome
from promptweave.errors import PromptweaveWarning
from promptweave.forms.turn_loop import MultiTurnGenInferencer, scripted
from promptweave.render.chat import to_openai_messages


def check(case: dict[str, Any]) -> Outcome:
    received: list[Any] = []
    with warnings.catch_warnings():
        # rows whose lists differ in length are part of the corpus; the warning is for users
        warnings.simplefilter("ignore", PromptweaveWarning)
        dataset, model = specs(case)
        inf = MultiTurnGenInferencer(dataset, model, scripted(case.get("model_replies") or [], received),
                                     infer_mode=case.get("infer_mode"))
        (result,) = inf.run([case["test_index"]])
    expected = case["expected"]
    got: dict[str, Any] = {"prompts": received,
                           "predictions": [t.reference_record() for t in result.turns]}
    if "messages" in expected:
        got["messages"] = [to_openai_messages(p, keep_extra_keys=True) for p in received]
    want = {k: expected.get(k) for k in got}
    return Outcome(got == want, got, want)
