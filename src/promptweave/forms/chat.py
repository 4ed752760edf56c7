"""ChatInferencer ``every`` / ``every_with_gt`` tasks in a run: one prediction row per chat.

The conversation loop (and every model call through the response cache) is the multi-turn one
(:mod:`promptweave.forms.turn_loop`); this module turns a batch of conversations into prediction rows that the
run's ordinary journal and scoring take, since these datasets are scored per row (an ``LMEvaluator`` judges the
whole conversation), not per turn. A failed request ends its chat: the row records the error, and the calls
never sent still close the progress bar.
"""
from __future__ import annotations

import copy
from functools import partial
from typing import Any, Callable, Sequence

from promptweave.forms.base import DatasetPlan, Form
from promptweave.forms.chat_loop import chat_prediction
from promptweave.infer.records import to_jsonable
from promptweave.work.task import Task


def chat_rows(task: Task, records: Sequence[Any], model: Any, cache: Any,
              progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Prediction rows of a batch of chat records: per-turn prompts and replies, and the row's prediction."""
    inf = copy.copy(task.multiturn)
    results = inf.run_cached(model, cache, task.params, [r.index for r in records], progress)
    by_index = {r.index: r for r in records}
    tpl = inf.template
    out: list[dict[str, Any]] = []
    unsent = 0
    for res in results:
        rec = by_index[res.index]
        conv = inf.conversation(res.index)
        replies = [t.prediction for t in res.turns if t.success]
        row: dict[str, Any] = {"index": res.index, "prompt": [to_jsonable(t.prompt) for t in res.turns],
                               "output": replies, "gold": task.gold(rec)}
        if inf.infer_mode != "every":
            row["turn_golds"] = [inf.gold(conv, t.turn_id) for t in res.turns]
        if res.complete and len(res.turns) == rec.requests:
            row["prediction"] = chat_prediction(conv, replies, infer_mode=inf.infer_mode,
                                                dialogue_mode=tpl.dialogue_mode)
        else:
            failed = res.turns[-1]
            row["prediction"] = None
            row["error"] = {"kind": "turn_failed", "attempts": 1,
                            "message": f"request {failed.turn_id} of this chat failed ({failed.error}); the "
                                       f"{rec.requests - len(res.turns)} after it were not sent"}
            unsent += rec.requests - len(replies)  # the failed call and those never sent
        out.append(row)
    if progress is not None and unsent:
        progress(unsent)
    return out


class ChatForm(Form):
    """ChatInferencer / ParallelChatInferencer ``every`` / ``every_with_gt``: each row's chat through the multi-turn
    loop (one record per chat), scored per row by the run."""

    name = "chat"

    def model_task(self, p: DatasetPlan, j: int, mspec: Any, params: Any, evaluation: Any,
                   extra: dict[str, Any]) -> Task:
        from promptweave.forms.chat_loop import chat_turns_inferencer
        from promptweave.work.task import ConversationRecord

        todo = p.todo if p.load_data else range(0)
        inf = chat_turns_inferencer(p.ds, mspec, params=params, file=p.file)
        records = [ConversationRecord(k, inf.template.n_requests(inf.conversation(k), inf.infer_mode)) for k in todo]
        mcfg = mspec.config
        return Task(dataset=p.ds.abbr, model_name=mspec.abbr, make_model=partial(p.make_model, mcfg),
                    records=records, mode=self.name, params=params, evaluation=evaluation,
                    golds={k: p.golds.get(k) for k in todo}, multiturn=inf)

    def rows(self, task: Any, records: Sequence[Any], model: Any, cache: Any,
             progress: Callable[[int], None] | None, gold: Callable[[int], Any]) -> list[dict[str, Any]]:
        return chat_rows(task, records, model, cache, progress)

    def view_turns(self, spec: Any, model: Any) -> Any:
        from promptweave.forms.chat_loop import chat_turns_inferencer

        return chat_turns_inferencer(spec, model)


FORM = ChatForm()

__all__ = ["FORM", "chat_rows"]
