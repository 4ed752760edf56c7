"""GPQA (graduate-level science multiple choice): its loader and the option-letter evaluator."""
from __future__ import annotations

from typing import Any

from promptweave.data.loaders.base import (
    LoadContext,
    Splits,
    csv_records,
    rows,
)
from promptweave.data.loaders.choice import ABCD
from promptweave.evaluate.evaluators import RowEvaluator


def gpqa(ctx: LoadContext, path: str, name: str, **_: Any) -> Splits:
    """``<path>/<name>`` (the GPQA CSV): the correct answer (column 8) is rotated through A-D, one pattern per
    question in turn, exactly as the reference places it."""
    f = ctx.member(ctx.find(path, local_mode=True), name)
    patterns = ("ABCD", "BCDA", "CDAB", "DABC")
    items, count = [], 0
    for loc, r in csv_records(f):
        if len(r) < 12:
            raise ctx.fail("a GPQA record needs at least 12 fields", file=f, where=loc, value=len(r))
        if r[7] == "Question":
            continue
        count += 1
        options = r[8:12]
        order = patterns[count % 4]
        line: dict[str, Any] = {"question": r[7]}
        for i in range(4):
            line[ABCD[i]] = options[ord(order[i]) - ord("A")]
        for i in range(4):
            if line[ABCD[i]] == options[0]:
                line["answer"] = ABCD[i]
                break
        items.append((loc, line))
    return rows(items, f)



class GPQAEvaluator(RowEvaluator):
    name = "GPQAEvaluator"

    def judge_row(self, pred, ref):
        return pred == ref, {"pred": pred, "answer": ref}


LOADERS = {
    "GPQADataset": gpqa,
}


EVALUATORS = {
    "GPQAEvaluator": GPQAEvaluator,
}
