"""SimpleQA (short factual questions): its loader and its judge-output postprocessor (A / B / C grades), which
LiveReasonBench's judge uses too."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.hub import one_split
from promptweave.data.sources import (
    Split,
    read_hf_named,
)


def _abc_grade(judgement: str) -> str:
    """SimpleQA-style grading: A correct, B incorrect, C (or nothing found) not attempted."""
    m = re.search(r"(A|B|C)", judgement or "")
    return m.group(0) if m else "C"


def _abc_metrics(grades: Sequence[str]) -> dict[str, float]:
    n = len(grades)
    if not n:
        return {"accuracy": 0.0, "accuracy_given_attempted": 0.0, "f1": 0.0}
    is_c, is_w = grades.count("A") / n, grades.count("B") / n
    given = is_c / (is_c + is_w) if is_c + is_w > 0 else 0.0
    f1 = 2 * given * is_c / (given + is_c) if given + is_c > 0 else 0.0
    return {"accuracy": is_c * 100, "accuracy_given_attempted": given * 100, "f1": f1}


def _post_simpleqa(outputs, rows, refs):
    grades = [_abc_grade(o) for o in outputs]
    return _abc_metrics(grades), grades, "A"


def _post_livereasonbench(outputs, rows, refs):
    grades = [_abc_grade(o) for o in outputs]
    metrics = _abc_metrics(grades)
    metrics.pop("accuracy")  # this variant reports no plain accuracy
    return metrics, grades, "A"


def simpleqa(ctx: LoadContext, path: str, num_examples: int | None = None, n_repeats: int = 1,
             **_: Any) -> Splits:
    """One CSV (types inferred as pandas does), optionally ``num_examples`` sampled with seed 0, repeated
    ``n_repeats`` times; the same rows as train and test."""
    import random

    f = ctx.find(path)
    got = read_hf_named("csv", data_files={"train": str(f)})
    part = one_split(ctx, got, "train")
    picked = list(zip(part.where, part.rows))
    if num_examples:
        if n_repeats != 1:
            raise ctx.fail("n_repeats is only supported without num_examples", where="n_repeats", value=n_repeats)
        picked = random.Random(0).sample(picked, num_examples)
    picked = picked * int(n_repeats)
    one = Split([r for _, r in picked], part.file, [w for w, _ in picked])
    return {"train": one, "test": Split(list(one.rows), one.file, list(one.where))}


# LiveReasonBench's judge grades as SimpleQA's does (A correct, B wrong, C not attempted)
JUDGE_POSTPROCESSORS = {
    "simpleqa_postprocess": (_post_simpleqa, frozenset()),
    "livereasonbench_postprocess": (_post_livereasonbench, frozenset()),
}


LOADERS = {
    "SimpleQADataset": simpleqa,
}
