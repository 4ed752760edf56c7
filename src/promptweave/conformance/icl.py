"""Checker for single-turn (``icl``) cases of the OpenCompass and AISBench corpora."""
from __future__ import annotations

from typing import Any

from promptweave.conformance.aisbench_common import specs
from promptweave.conformance.outcome import Outcome
from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder
from promptweave.render.chat import to_openai_messages


def builder_for(case: dict[str, Any]) -> PromptBuilder:
    if case.get("suite") == "aisbench":
        dataset, model = specs(case)
        return PromptBuilder(dataset, model, case.get("mode", dataset.inferencer.mode))
    test = case["test"]
    train = case["train"] if case.get("train") is not None else test
    ds_cfg = dict(case["dataset"])
    dataset = DatasetSpec.from_config(ds_cfg, train=train, test=test, file=case.get("id"), check_columns=False)
    m = case["model"]
    model = ModelSpec.from_config({"kind": m["kind"], "meta_template": m.get("meta_template"), "abbr": m["name"]})
    mode = case.get("mode", dataset.inferencer.mode)
    return PromptBuilder(dataset, model, mode)


def check(case: dict[str, Any]) -> Outcome:
    builder = builder_for(case)
    idx = case["test_index"]
    expected = case["expected"]
    if case["suite"] == "opencompass":
        if builder.mode == "ppl":
            labels = case.get("labels") or builder.labels()
            got = {str(lab): builder.build(idx, lab).rendered for lab in labels}
        else:
            got = builder.build(idx).rendered
        return Outcome(got == expected, got, expected)
    # aisbench: a dict of prompts (+ labels, messages)
    got: dict[str, Any] = {}
    if builder.mode == "ppl":
        labels = expected.get("labels") or builder.labels()
        recs = [builder.build(idx, lab) for lab in labels]
        got["labels"] = list(labels)
    else:
        recs = [builder.build(idx)]
    got["prompts"] = [r.rendered for r in recs]
    if "messages" in expected:
        got["messages"] = [_ais_messages(r.rendered) for r in recs]
    want = {k: expected[k] for k in got}
    if "labels" in got and "labels" not in expected:
        want.pop("labels")
        got.pop("labels")
    return Outcome(got == want, got, want)


def _ais_messages(rendered: Any) -> list[dict[str, Any]]:
    return to_openai_messages(rendered, keep_extra_keys=True)
