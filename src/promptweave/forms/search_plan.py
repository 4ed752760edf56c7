"""Planning the search forms: ``ToTInferencer`` (tree-of-thought) and ``AttackInferencer`` (prompt selection).

Both are one task per dataset × model. A ToT task's records are the rows' prompts, kept with their filled text
(the search starts from it). An attack task holds one set of records per prompt of ``original_prompt_list``,
each built from the rows with ``{adv_key}`` set to that prompt, so ``view`` and ``--dry-run`` show every prompt
that will be sent.
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import chain
from typing import Any

from promptweave.errors import PromptweaveError, PromptweaveWarning, RoleError
from promptweave.work.task import LazyRecords, Task


class VariantRecords(LazyRecords):
    """The records of several prompt variants of the same rows, variant after variant."""

    def __init__(self, variants: Sequence[Sequence[Any] | LazyRecords], rows: int) -> None:
        self.variants = list(variants)
        self.n_rows = rows
        self.per_row = max(1, len(self.variants))
        self.chunk = 4096

    def __iter__(self) -> Iterator[Any]:
        return chain.from_iterable(self.variants)

    def __len__(self) -> int:
        return sum(len(v) for v in self.variants)

    @property
    def rows(self) -> int:
        return self.n_rows

    @property
    def indices(self) -> list[int]:  # type: ignore[override]
        first = self.variants[0] if self.variants else []
        if isinstance(first, LazyRecords):
            return list(first.indices)
        return list(dict.fromkeys(r.index for r in first))

    def select_rows(self, start: int, stop: int | None = None) -> VariantRecords:
        def cut(v: Sequence[Any] | LazyRecords) -> Sequence[Any] | LazyRecords:
            if isinstance(v, LazyRecords):
                return v.select_rows(start, stop)
            keep = list(dict.fromkeys(r.index for r in v))[start:stop]
            return [r for r in v if r.index in set(keep)]

        variants = [cut(v) for v in self.variants]
        return VariantRecords(variants, len(variants[0].indices) if variants and isinstance(variants[0], LazyRecords)
                              else len({r.index for r in variants[0]}) if variants else 0)


def search_tasks(cfg: Any, ds: Any, raw: Any, i: int, mode: str, todo: range, golds: dict, model_ids: Sequence[int],
                 specs: Sequence[Any], make_model: Callable[[Any], Any], allow_code: bool, load_data: bool,
                 counters: Any, where: str) -> list[Task]:
    """The ToT or attack task of dataset ``i`` for each model."""
    from promptweave.compat.models import resolve_model_type
    from promptweave.engine import PromptBuilder
    from promptweave.evaluate import build_evaluation
    from promptweave.models.factory import cfg_get, generation_params
    from promptweave.work.records import prompt_budget, role_error, task_records

    file = str(cfg.path)
    settings = ds.inferencer.settings
    tasks: list[Task] = []
    if mode == "tot":
        from promptweave.infer.tot import ToTSettings, row_text

        tot = ToTSettings.from_settings(settings, file=file, field=where)
        wrapper = tot.make_wrapper(file=file, field=f"{where}.prompt_wrapper.type")
    else:
        from promptweave.infer.attack import AttackSettings, attack_stage, with_prompt

        attack = AttackSettings.from_settings(settings, file=file, field=where)
        stage = attack_stage(getattr(cfg, "variables", {}) or {}, file=file)
        if stage is not None:
            warnings.warn(f"{file}: attack: promptbench is installed, but promptweave runs only the prompt "
                          f"selection; PromptBench's {stage.attack!r} search on the best prompt(s) is not run",
                          PromptweaveWarning, stacklevel=4)
        variants = [dataclasses.replace(ds, test=with_prompt(ds.test, attack.adv_key, p)) for p in attack.prompts]
    for j, mspec in zip(model_ids, specs):
        mcfg = mspec.config
        evaluation = build_evaluation(raw.get("eval_cfg"), mode="gen", allow_code=allow_code,
                                      where=f"datasets[{i}].eval_cfg", rows=ds.test, model_cfg=mcfg,
                                      dataset_cfg=raw, file=file, names=(ds.abbr, mspec.abbr))
        try:
            if mode == "tot":
                params = generation_params(mcfg, max_out_len=settings.get("max_out_len"),
                                           stop=settings.get("stopping_criteria"),
                                           generation_kwargs=settings.get("generation_kwargs"))
                builder = PromptBuilder(ds, mspec, "gen")
                if load_data:
                    records: Any = LazyRecords(partial(builder.build_all, with_prompt=True), todo)
                    first = list(builder.build_all(todo[:1], with_prompt=True))
                else:
                    records = first = builder.build_row(0, ids=[], with_prompt=True)
                for r in first:  # the search does string operations on the prompt: refuse a dialogue template now
                    try:
                        row_text(r)
                    except PromptweaveError as exc:
                        raise exc.at(file=file, prefix=f"datasets[{i}]") from None
                extra = {"tot": tot, "wrapper": wrapper, "known": {}}
            else:
                # the reference's AttackInferencer passes only max_out_len to the model
                params = generation_params(mcfg, max_out_len=settings.get("max_out_len"))
                budget = prompt_budget(settings.get("max_seq_len"), cfg_get(mcfg, "max_seq_len"), mode="gen",
                                       max_out_len=params.max_out_len, where=f"{where}.max_seq_len")
                per_prompt = [task_records(PromptBuilder(v, mspec, "gen"), v, todo, load_data, budget, counters, j, mcfg)
                              for v in variants]
                records = VariantRecords(per_prompt, len(todo) if load_data else 1)
                extra = {"attack": attack}
        except RoleError as exc:
            raise role_error(exc, raw, i, j, file) from None
        tasks.append(Task(dataset=ds.abbr, model_name=mspec.abbr, make_model=partial(make_model, mcfg),
                          records=records, mode=mode, params=params, evaluation=evaluation,
                          golds=golds if load_data else {}, settings=extra))
        resolve_model_type(mcfg, file=file, field=f"models[{j}].type")
    return tasks
