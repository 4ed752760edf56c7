"""MuSR (multistep soft reasoning: murder mysteries, object placements, team allocation), as OpenCompass runs it.

The loader reads ``<path>/<name>.json`` (a list of stories, each with its questions) and writes each question's
whole prompt into the ``prompt`` column: the story, the task's hint (before the question for object placements,
inside the closing instruction otherwise), the numbered choices and the request to end with ``ANSWER: n``.
OpenCompass only uses its chain-of-thought-plus-hint prompt (no worked example), so that is the one built here.
``gold_answer`` is the 1-based choice number; ``MusrEvaluator`` reads the first number after ``ANSWER:`` on the
first line of the reply that has one.
"""
from __future__ import annotations

import re
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file
from promptweave.data.loaders.classify import table
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths

_SYSTEM = "You are a helpful assistant that will answer the questions given by the user."

# the MuSR tasks' hints (benchmark prompt text, as the dataset's authors wrote them): (hint, hint before question)
_TASKS: dict[str, tuple[str, bool]] = {
    "murder_mysteries": (
        "Before selecting a choice, explain your reasoning step by step. The murderer needs to have a means (access "
        "to weapon), motive (reason to kill the victim), and opportunity (access to crime scene) in order to have "
        "killed the victim. Innocent suspects may have two of these proven, but not all three. An innocent suspect "
        "may be suspicious for some other reason, but they will not have all of motive, means, and opportunity "
        "established.\n\nIf you believe that both suspects have motive, means, and opportunity, you should make an "
        "educated guess and pick the one for whom these are best established. If you believe that neither suspect "
        "has all three established, then choose the suspect where these are most clearly established.", False),
    "object_placements": (
        "Based on this story, we want to identify where someone believes that a certain object is at the end of the "
        "story. In order to do that, you need to read the story and keep track of where they think the object is at "
        "each point. When an object is moved, the person may observe its new location if they saw it move.\n\nTo "
        "see where an object ends up, they must be able to see the location that it moves to and not be too "
        "distracted by what they are doing. If they do not observe the object moving, then they will still believe "
        "it to be in the last location where they observed it.", True),
    "team_allocation": (
        "The story should allow you to determine how good each person is at a skill. Roughly, each person is either "
        "great, acceptable, or bad at a task. We want to find an optimal assignment of people to tasks that uses "
        "their skills as well as possible. In addition, one task will have to have two people assigned to it. The "
        "effectiveness of their teamwork (great team, acceptable team, or bad team) also impacts the overall "
        "quality of the assignment.\n\nWhen two people need to work on a task and one is bad at it, they don't "
        "necessarily benefit from the other person being good, unless they work well together.\n\nWith different "
        "strengths, weaknesses, and interpersonal dynamics at play, you should allocate your team to find the "
        "single assignment to ensure that the tasks overall are completed as effectively as possible.", False),
}
_CLOSE = ("Explain your reasoning step by step before you answer. Finally, the last thing you generate should be "
          '"ANSWER: (your answer here, including the choice number)"')


def _prompt(context: str, question: str, choices: str, hint: str, before: bool) -> str:
    asked = f"{question}\n\nPick one of the following choices:\n{choices}\n\nYou must pick one option. "
    if before:
        return f"{context}\n\n{hint}\n\n{asked}{_CLOSE}"
    return f"{context}\n\n{asked}{hint} {_CLOSE}"


def _story_hash(story: dict[str, Any]) -> Any:
    qs = story.get("questions") or [{}]
    data = qs[0].get("intermediate_data") if isinstance(qs[0], dict) else None
    return data[0].get("story_hash_id") if data and isinstance(data[0], dict) else None


def musr(ctx: LoadContext, path: str, name: str, self_consistency_n: int = 1,
         exclude_contrastive_examples: bool = False, reverse_contrastive_sample: bool = False,
         skip_ablated: bool = False, randomize: bool = False, offset: int = 0, sample_size: int | None = None,
         **_: Any) -> Splits:
    """One row per question (times ``self_consistency_n``). With ``exclude_contrastive_examples`` only the first
    story of each ``story_hash_id`` is kept (``reverse_contrastive_sample``: only the later ones); then
    ``offset`` / ``sample_size`` cut the stories."""
    if name not in _TASKS:
        raise ctx.fail("unknown MuSR task", where="name", value=name)
    hint, before = _TASKS[name]
    f = ctx.member(ctx.find(path), f"{name}.json")
    stories = json_file(f)
    if not isinstance(stories, list):
        raise ctx.fail("expected a JSON list of stories", file=f)
    kept, seen = [], set()
    for i, story in enumerate(stories):
        if not isinstance(story, dict) or "context" not in story or not isinstance(story.get("questions"), list):
            raise ctx.fail("a story has context and a questions list", file=f, where=f"[{i}]")
        h = _story_hash(story) if exclude_contrastive_examples else None
        if h:
            if (h in seen) == reverse_contrastive_sample:
                kept.append((i, story))
            seen.add(h)
        else:
            kept.append((i, story))
    if sample_size:
        kept = kept[offset:offset + min(len(kept), sample_size)]
    else:
        kept = kept[offset:]
    items = []
    for i, story in kept:
        for j, q in enumerate(story["questions"]):
            where = f"[{i}].questions[{j}]"
            if not isinstance(q, dict) or not all(k in q for k in ("question", "choices", "answer")):
                raise ctx.fail("a question has question, choices and answer", file=f, where=where)
            choices = "\n".join(f"{n + 1} - {c}" for n, c in enumerate(q["choices"]))
            prompt = _prompt(story["context"], q["question"], choices, hint, before)
            for sc in range(self_consistency_n):
                items.append((where, {
                    "context": story["context"], "question_text": q["question"], "question": q,
                    "answer": q["answer"], "choices": q["choices"], "choices_str": choices,
                    "intermediate_trees": q.get("intermediate_trees", []),
                    "intermediate_data": q.get("intermediate_data", []), "prompt": prompt,
                    "system_prompt": _SYSTEM, "gold_answer": q["answer"] + 1, "scidx": sc,
                    "self_consistency_n": self_consistency_n, "ablation_name": "cot+"}))
    return table(items, f)


_NUMBER = re.compile(r"\d+")


def musr_answer(reply: Any) -> int | None:
    """The first number after ``ANSWER:`` on the first reply line holding ``ANSWER:`` (None when there is none)."""
    for line in ("" if reply is None else str(reply)).split("\n"):
        if "ANSWER:" in line:
            m = _NUMBER.search(line.split("ANSWER:")[-1].strip())
            return int(m.group()) if m else None
    return None


class MusrEvaluator(Evaluator):
    name = "MusrEvaluator"

    def __init__(self, answer_index_modifier: int = 1, self_consistency_n: int = 1,
                 pred_postprocessor: Any = None) -> None:
        self.answer_index_modifier = answer_index_modifier
        self.self_consistency_n = self_consistency_n

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        got = [musr_answer(p) for p in predictions]
        correct = [g is not None and g == r for g, r in zip(got, references)]
        acc = 100 * sum(correct) / len(correct) if correct else 0
        return Scores({"accuracy": acc}, correct,
                      [{"pred": g, "answer": r, "correct": c} for g, r, c in zip(got, references, correct)])


# the suite's entries in the compat registries (compat/suites.py)
LOADERS = {"MusrDataset": musr}
EVALUATORS = {"MusrEvaluator": MusrEvaluator}
