"""AgentInferencer ``every`` / ``every_with_gt`` tasks in a run: one prediction row per chat, in the reference's shape.

The agent loop (and every model call through the response cache) is :mod:`promptweave.infer.agent`; this module
turns a batch of chats into the rows the run's journal and scoring take. A row holds what the reference's
predictions file holds for it (``origin_prompt``: the user messages, ``prediction``: the agent's answer to each,
``steps``: each turn's actions with their results, ``gold``: the dataset's references) plus the model's raw
replies per turn. A failed model call ends its chat: the row records the error.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

from promptweave.run.task import Task

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


__all__ = ["agent_rows"]
