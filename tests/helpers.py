"""Small builders for engine tests: dataset/model specs from plain dicts."""
from __future__ import annotations

from typing import Any

from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder


def make_builder(infer_cfg: dict[str, Any], test: list[dict], *, train: list[dict] | None = None,
                 meta: dict | None = None, kind: str = "lm", mode: str | None = None,
                 output: str | None = "answer", inputs: tuple = ("question",), use_plans: bool = True) -> PromptBuilder:
    ds = DatasetSpec.from_config(
        {"abbr": "t", "reader_cfg": {"input_columns": list(inputs), "output_column": output}, "infer_cfg": infer_cfg},
        train=train if train is not None else test, test=test)
    model = ModelSpec.from_config({"abbr": "m", "kind": kind, "meta_template": meta})
    return PromptBuilder(ds, model, mode, use_plans=use_plans)


def both_paths(infer_cfg: dict[str, Any], test: list[dict], index: int = 0, label: Any = None, **kw: Any) -> Any:
    """Render through the compiled-plan path and the general path; they must agree."""
    b = make_builder(infer_cfg, test, use_plans=True, **kw)
    fast = b.build(index, label).rendered
    assert b.build(index, label).rendered == fast  # a plan's second use runs its compiled code
    slow = make_builder(infer_cfg, test, use_plans=False, **kw).build(index, label).rendered
    assert fast == slow
    return fast


CHATML = {
    "round": [
        {"role": "HUMAN", "begin": "<u>", "end": "</u>\n"},
        {"role": "BOT", "begin": "<a>", "end": "</a>\n", "generate": True},
    ],
}
API_META = {
    "round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}],
    "reserved_roles": [{"role": "SYSTEM", "api_role": "SYSTEM"}],
}
