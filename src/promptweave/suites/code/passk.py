"""What the code benchmarks share: the unbiased pass@k estimate and the evaluators' common attributes."""
from __future__ import annotations

from promptweave.evaluate.code_exec import Limits


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k samples drawn from n, of which c pass, passes (Chen et al.'s estimate)."""
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


class CodeEvaluator:
    """An evaluator that runs the answers (``needs`` holds ``code``: the plan gives it the chosen sandbox)."""

    needs = frozenset({"code", "rows"})
    name = "code"
    limits = Limits()
