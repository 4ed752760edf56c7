"""AgentInferencer ``every`` / ``every_with_gt`` tasks in a run: one prediction row per chat, in the reference's shape.

The agent loop (and every model call through the response cache) is :mod:`promptweave.forms.agent_loop`; this module
turns a batch of chats into the rows the run's journal and scoring take. A row holds what the reference's
predictions file holds for it (``origin_prompt``: the user messages, ``prediction``: the agent's answer to each,
``steps``: each turn's actions with their results, ``gold``: the dataset's references) plus the model's raw
replies per turn. A failed model call ends its chat: the row records the error.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from promptweave.forms.base import DatasetPlan, Form
from promptweave.work.task import Task

IMAGES = "agent_files"  # figures the agents' code drew, under the work dir (CIBench's vis_sim reads them)


def agent_rows(task: Task, records: Sequence[Any], model: Any, cache: Any,
               progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    inf = task.multiturn
    root = Path(cache.path).parent / IMAGES if getattr(cache, "path", None) is not None else None
    results = inf.run_cached(model, cache, task.params, [r.index for r in records], progress, image_root=root)
    by_index = {r.index: r for r in records}
    out: list[dict[str, Any]] = []
    for res in results:
        rec = by_index[res.index]
        row: dict[str, Any] = {
            "index": res.index,
            "prompt": [t.origin_prompt for t in res.turns],  # the reference's origin_prompt
            "output": [t.replies for t in res.turns],
            "steps": [t.steps for t in res.turns],
            "turn_golds": [t.gold for t in res.turns],
            "gold": task.gold(rec),
            "prediction": [t.prediction for t in res.turns],
            "model_calls": res.calls,
        }
        if res.restarts:
            row["session_restarts"] = res.restarts
        if res.error is not None:
            row["prediction"] = None
            row["error"] = {"kind": "turn_failed", "attempts": 1,
                            "message": f"a model call of turn {len(res.turns) - 1} failed ({res.error}); the "
                                       f"{len(inf.conversation(res.index)) - len(res.turns)} turn(s) after it "
                                       "were not run"}
        out.append(row)
    return out


class AgentForm(Form):
    """AgentInferencer ``every`` / ``every_with_gt``: a ReAct code agent per chat (one record per chat), its model
    calls made by the agent's llm, its code run in a sandboxed session; scored per row by the run."""

    name = "agent"

    def params(self, mcfg: Any, settings: Any) -> Any:
        from promptweave.forms.agent_loop import agent_llm
        from promptweave.models.factory import generation_params

        super().params(mcfg, settings)  # the model's own settings are checked as for any form
        return generation_params(agent_llm(mcfg), stop=settings.get("stopping_criteria"),
                                 generation_kwargs=settings.get("generation_kwargs"))

    def model_type_cfg(self, mcfg: Any) -> Any:
        from promptweave.forms.agent_loop import agent_llm

        return agent_llm(mcfg)

    def model_task(self, p: DatasetPlan, j: int, mspec: Any, params: Any, evaluation: Any,
                   extra: dict[str, Any]) -> Task:
        from promptweave.forms.agent_loop import AgentInferencer, agent_llm, agent_settings, default_data_dir
        from promptweave.work.task import ConversationRecord

        todo = p.todo if p.load_data else range(0)
        mcfg_raw, where = p.cfg.models[j], f"models[{j}]"
        settings = default_data_dir(agent_settings(mcfg_raw, file=p.file, where=where))
        if agent_llm(mcfg_raw) is not mcfg_raw:  # a CodeAgent / LagentAgent: its llm is the model that is sent prompts
            from promptweave.engine.spec import ModelSpec

            llm = agent_llm(mcfg_raw)
            mspec = ModelSpec.from_config(llm, file=p.file, field_path=f"{where}.llm")
        inf = AgentInferencer(p.ds, mspec, p.settings.get("infer_mode"), settings, file=p.file)
        records = [ConversationRecord(k, len(inf.conversation(k))) for k in todo]
        mcfg = agent_llm(mspec.config)
        return Task(dataset=p.ds.abbr, model_name=mspec.abbr, make_model=partial(p.make_model, mcfg),
                    records=records, mode=self.name, params=params, evaluation=evaluation,
                    golds={k: p.golds.get(k) for k in todo}, multiturn=inf,
                    settings={"infer_mode": inf.infer_mode, "agent": settings.source, "where": p.where})

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        return agent_rows(task, records, model, cache, progress)

    def view_turns(self, spec: Any, model: Any) -> Any:
        from promptweave.forms.agent_loop import agent_turns_inferencer

        return agent_turns_inferencer(spec, model)


FORM = AgentForm()

__all__ = ["FORM", "agent_rows"]
