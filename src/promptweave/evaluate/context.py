"""What an evaluator may need besides predictions and gold answers: the test rows, the cache, a judge, a work dir."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Scores:
    """An evaluator's result: headline ``metrics`` (numbers, the reference's names), one verdict per row
    (``None`` where the metric has no per-row verdict, e.g. BLEU), per-row ``details`` and non-numeric ``extra``."""

    metrics: dict[str, float]
    correct: list[bool | None]
    details: list[dict] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class EvalContext:
    """Everything beyond predictions and golds, aligned with the predictions.

    ``rows``: the test rows (dataset columns); ``prompts``: the prompts sent (``origin_prompt``);
    ``cache``: the run's :class:`~promptweave.infer.cache.ResponseCache` (judge calls go through it);
    ``judge``: builds a judge ``(model, ModelSpec)`` from a ``judge_cfg`` (``None``/empty: the run's default judge);
    ``allow_code_exec``: the user passed ``--allow-code-exec``; ``code_sandbox``: where that code runs
    (``--code-sandbox``: ``bwrap``, the OS sandbox, or the weaker ``rlimits``).
    """

    rows: Sequence[Mapping[str, Any]] = ()
    prompts: Sequence[Any] | None = None
    cache: Any = None
    judge: Callable[[Any], tuple[Any, Any]] | None = None
    workdir: Path | None = None
    allow_code_exec: bool = False
    code_sandbox: str = "bwrap"
    where: str = "eval_cfg"
    progress: Callable[[int], None] | None = None
    # whose predictions these are (pairwise judges find the other model's answers by these names)
    dataset: str | None = None
    model: str | None = None
    # each row's recorded agent steps (AgentInferencer every / every_with_gt), for CIBenchEvaluator
    steps: Sequence[Any] | None = None
