"""A task's prompt records at plan time: the prompt budget, each model's token counter, the rows' records
(in-context examples fitted to the budget, or built lazily batch by batch) and role errors located in the config.

Shared by every form that builds prompts from the dataset's templates (``run/plan.py``, the forms under
``forms/``), so none of them reaches into another for these.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, Callable

from promptweave.errors import ConfigError, PromptweaveWarning
from promptweave.models.factory import model_name
from promptweave.work.task import LazyRecords


def prompt_budget(inferencer_max: Any, model_max: Any, *, mode: str, max_out_len: int,
                  where: str = "max_seq_len") -> int | None:
    """Most tokens a prompt may have, or None for no limit.

    The inferencer's ``max_seq_len`` bounds the prompt itself (as the reference's
    inferencers check it); the model's bounds prompt + generated tokens, so in gen
    mode ``max_out_len`` is kept free (the reference's model cuts the prompt to that).
    """
    limits = []
    for value, field, reserve in ((inferencer_max, "inferencer.max_seq_len", 0),
                                  (model_max, "model.max_seq_len", max_out_len if mode == "gen" else 0)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError("max_seq_len must be a positive whole number", field=field, value=value)
        limits.append(value - reserve)
    if not limits:
        return None
    budget = min(limits)
    if budget < 1:
        raise ConfigError(f"max_seq_len leaves no room for the prompt after max_out_len={max_out_len}",
                          field=where, value=budget + max_out_len, expected=f"more than {max_out_len}")
    return budget


class Counters:
    """Each model's token counter, loaded once (tokenizer only) and only when a row has examples to fit."""

    def __init__(self, load: Callable[[Any], Any]) -> None:
        self.load = load
        self.got: dict[int, Any] = {}

    def get(self, j: int, mcfg: Any) -> Any:
        if j not in self.got:
            self.got[j] = self.load(mcfg)
            if self.got[j] is None:
                warnings.warn(f"model {model_name(mcfg)}: no tokenizer to count prompt tokens, so in-context "
                              "examples are not fitted into max_seq_len; set tokenizer_path in its config to fit "
                              "them", PromptweaveWarning, stacklevel=3)
        return self.got[j]


def shots_for_stand_in(ds: Any) -> list[int]:
    if ds.ice_template is None or type(ds.retriever).__name__ == "ZeroRetriever":
        return []
    return [0] if ds.template.ice_token else []


def _locate_role(obj: Any, role: Any, path: str) -> str | None:
    """The config path of the first turn whose role (or fallback_role) is ``role``."""
    if isinstance(obj, Mapping):
        for key in ("role", "fallback_role"):
            if obj.get(key) == role:
                return f"{path}.{key}"
        for k, v in obj.items():
            found = _locate_role(v, role, f"{path}.{k}" if isinstance(k, str) and k.isidentifier()
                                 else f"{path}[{k!r}]")
            if found:
                return found
    elif isinstance(obj, (list, tuple)):
        for n, v in enumerate(obj):
            found = _locate_role(v, role, f"{path}[{n}]")
            if found:
                return found
    return None


def role_error(exc: Any, raw: Any, i: int, j: int, file: str) -> Any:
    """A role error from rendering, re-located at the template turn that names the role (PW120 names the field)."""
    from promptweave.errors import RoleError

    infer = raw.get("infer_cfg") or {}
    field = None
    for name in ("prompt_template", "ice_template"):
        tpl = infer.get(name)
        if isinstance(tpl, Mapping):
            field = _locate_role(tpl, exc.value, f"datasets[{i}].infer_cfg.{name}")
        if field:
            break
    return RoleError(f"{exc.message} (the meta template of models[{j}])", file=file,
                     field=field or f"datasets[{i}].infer_cfg.prompt_template", value=exc.value,
                     expected=exc.expected)


def task_records(builder: Any, ds: Any, n: int | range, load_data: bool, budget: int | None, counters: Counters,
             j: int, mcfg: Any) -> list[Any] | LazyRecords:
    """Every row's prompts (in-context examples fitted to the budget), or the stand-in row's without data."""
    from promptweave.engine.fit import ShotFitter

    if not load_data:
        return builder.build_row(0, ids=shots_for_stand_in(ds))
    todo = range(n) if isinstance(n, int) else n  # ray helper: a shard's row range
    count = None
    if budget is not None and any(builder.shot_ids[k] for k in todo):
        count = counters.get(j, mcfg)
    if count is not None and budget is not None:
        return list(ShotFitter(builder, count, budget).build_all(todo))
    # built batch by batch as the task runs, never all at once; the first row now, so a template
    # error still stops the plan before anything is sent
    if todo:
        list(builder.build_all([todo[0]]))
    return LazyRecords(builder.build_all, todo, per_row=1 if builder.mode != "ppl" else max(1, len(builder.labels())),
                       chunks=builder.record_chunks)
