"""LongBench v2 (AISBench's ``longbenchv2_gen``): its loader (one JSON / JSON-lines file of multiple-choice
questions on long contexts) and its score, overall and per difficulty and length."""
from __future__ import annotations

import json
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, json_file, jsonl, need, rows
from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator

FIELDS = ("question", "context", "answer", "choice_A", "choice_B", "choice_C", "choice_D", "difficulty", "length")


def longbench_v2(ctx: LoadContext, path: str, **_: Any) -> Splits:
    """``test``: each record's nine fields (a record lacking one is a data error); ``train``: the records whole."""
    f = ctx.find(path)
    head = f.read_text(encoding="utf-8", errors="replace").lstrip()[:1]
    if head == "[":
        data = json_file(f)
        records = [(f"[{i}]", r) for i, r in enumerate(data)]
    else:
        records = jsonl(f)
    test, train = [], []
    for loc, r in records:
        if not isinstance(r, dict):
            raise ctx.fail("a LongBench v2 record must be a JSON object", file=f, where=loc,
                           value=json.dumps(r)[:80])
        need(ctx, r, FIELDS, file=f, where=loc)
        train.append((loc, dict(r)))
        test.append((loc, {k: r[k] for k in FIELDS}))
    return {"train": rows(train, f), "test": rows(test, f)}


class LongBenchv2Evaluator(Evaluator):
    """``accuracy`` (the prediction equals the gold letter), and ``accuracy_<easy|hard>`` /
    ``accuracy_<short|medium|long>`` over the rows of each group present."""

    name = "LongBenchv2Evaluator"
    needs = frozenset({"rows"})

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        rows_ = list(ctx.rows) if ctx is not None else []
        if not rows_:
            raise EvaluationError(f"{self.name} needs the test rows (difficulty, length)", field="evaluator")
        groups: dict[str, list[int]] = {}
        correct: list[bool | None] = []
        for pred, ref, row in zip(predictions, references, rows_):
            ok = pred == ref
            correct.append(ok)
            for key, allowed in (("difficulty", ("easy", "hard")), ("length", ("short", "medium", "long"))):
                value = row.get(key, "unknown")
                if value in allowed:
                    hit = groups.setdefault(value, [0, 0])
                    hit[0] += ok
                    hit[1] += 1
        n = len(correct)
        metrics = {"accuracy": sum(1 for c in correct if c) / n * 100 if n else 0.0}
        for g in ("easy", "hard", "short", "medium", "long"):
            if g in groups and groups[g][1]:
                metrics[f"accuracy_{g}"] = groups[g][0] / groups[g][1] * 100
        return Scores(metrics, correct, [{"pred": p, "answer": r, "correct": c}
                                         for p, r, c in zip(predictions, references, correct)])


EVALUATORS = {"ais_bench:LongBenchv2Evaluator": LongBenchv2Evaluator}
LOADERS = {"ais_bench:LongBenchv2Dataset": longbench_v2}
