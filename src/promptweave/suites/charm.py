"""CHARM (Chinese commonsense reasoning): its loader and the memory task's rule-based verdicts
(``CharmMemoryEvaluator``, shaped as the LLM judge is)."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.qa import examples
from promptweave.errors import JudgeError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.judge_lm import LMEvaluator

_UNSURE = ("不确定", "无法确定", "无法回答", "不知道", "不认识")
RIGHT, WRONG = "[正确]", "[错误]"


def charm_memory_verdict(pred: Any, ref: Any) -> str:
    """CHARM's rule for its recommendation memory task: an unsure answer is wrong; a gold ``[not]x`` is right when
    ``x`` is absent from the answer; otherwise right when any gold string (one, or a list) is in it."""
    pred = pred if isinstance(pred, str) else str(pred)
    if any(u in pred for u in _UNSURE):
        return WRONG
    negative = isinstance(ref, str) and ref.startswith("[not]")
    golds = [ref[5:] if negative else ref] if isinstance(ref, str) else list(ref or [])
    hit = any(str(g) in pred for g in golds)
    return (WRONG if hit else RIGHT) if negative else (RIGHT if hit else WRONG)


class CharmMemoryEvaluator:
    """CHARM memory's rule-based evaluator, shaped as its judge siblings (``LMEvaluator``) are: each row gets a
    ``[正确]``/``[错误]`` verdict in place of a judge reply and no metric (CHARM's summarizer counts them)."""

    name = "CharmMemoryEvaluator"
    needs = frozenset({"rows"})
    pred_postprocessor = None

    def __init__(self, prompt_template: Any = None, judge_cfg: Any = None, output_path: Any = None,
                 dataset_cfg: Any = None, **unknown: Any) -> None:
        allowed = set(LMEvaluator.FIELDS)
        bad = sorted(k for k in unknown if k not in allowed)
        if bad:
            raise JudgeError("unknown CharmMemoryEvaluator setting", field=f"evaluator.{bad[0]}",
                             expected=", ".join(LMEvaluator.FIELDS))

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        from promptweave.evaluate.evaluators import check_lengths

        check_lengths(predictions, references, self.name)
        rows = list(ctx.rows) if ctx is not None else []
        details, correct = [], []
        for i, (p, r) in enumerate(zip(predictions, references)):
            verdict = charm_memory_verdict(p, r)
            row = rows[i] if i < len(rows) else {}
            question = "".join(f"{v}\n" for k, v in row.items() if k != "target")
            details.append({"judge": {"prompt": [{"role": "HUMAN", "prompt": f"[Question]: {question}[Assistant's "
                                                  f"Answer]: {p}"}], "output": verdict, "grade": verdict,
                                      "model": "rule"}})
            correct.append(verdict == RIGHT)
        return Scores({}, correct, details, {"note": "no metric: CHARM's summarizer counts the [正确] verdicts"})


def charm(ctx: LoadContext, path: str, name: str) -> Splits:
    """CHARM: the BBH layout, found as a local path."""
    return examples(ctx, ctx.member(ctx.find(path, local_mode=True), f"{name}.json"))


LOADERS = {
    "CharmDataset": charm,
}
EVALUATORS = {
    "CharmMemoryEvaluator": CharmMemoryEvaluator,
}
