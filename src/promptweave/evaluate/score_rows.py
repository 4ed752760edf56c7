"""Scoring a task's prediction rows in place: golds postprocessed, verdicts, judge records, metrics."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from promptweave.errors import PromptweaveError


def score_rows(evaluation: Any, rows: Sequence[dict[str, Any]], *, cache: Any = None,
               workdir: Path | None = None) -> tuple[dict[str, Any], str | None]:
    """Score ``rows`` (each with ``index``, ``prompt``, ``prediction``, ``gold``) and annotate them with
    ``gold`` (postprocessed), ``correct`` and, for judged rows, ``judge`` (prompt, reply, grade).

    Returns the results-file fields (``metrics`` and any non-numeric evaluator output) and an error message when
    scoring failed (the rows then stay unscored)."""
    try:
        golds = [evaluation.process_gold(r["gold"]) for r in rows]
        ctx = evaluation.context([r["index"] for r in rows], prompts=[r.get("prompt") for r in rows], cache=cache,
                                 workdir=workdir)
        scores = evaluation.score([r["prediction"] for r in rows], golds, ctx)
    except PromptweaveError as exc:
        return {}, str(exc)
    details = scores.details if scores.details is not None and len(scores.details) == len(rows) else None
    for i, (r, g, ok) in enumerate(zip(rows, golds, scores.correct)):
        r["gold"] = g
        r["correct"] = None if ok is None else bool(ok)
        if details is not None and isinstance(details[i], dict) and "judge" in details[i]:
            r["judge"] = details[i]["judge"]
    out: dict[str, Any] = {"metrics": scores.metrics}
    if scores.extra:
        out["evaluation"] = scores.extra
    return out, None
