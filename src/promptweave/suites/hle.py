"""Humanity's Last Exam: its loader; and its scoring.

HLE (Humanity's Last Exam, AISBench's ``hle_llmjudge``): the judge stage's JSON verdicts scored as AISBench's
``HLEJudgeEvaluator`` scores them. The judge stage itself is ``evaluate/judge_stage.py``.

Each judge reply is a JSON object (``extracted_final_answer``, ``reasoning``, ``correct``: yes/no,
``confidence``: 0-100); a reply that is not one is left out (the denominator stays every row). Metrics:
``accuracy`` (percent, 2 places), its 95% Wald half-width ``confidence_half_width``, the RMS
``calibration_error`` over confidence bins of 100 rows (×100, the last bin left out as the reference leaves it
out; with fewer than 100 rows, |mean confidence − accuracy|) and ``sample_num``. AISBench writes ``accuracy`` as
the text ``"<acc>% +/- <half>%"``: here the figures are numbers, and that text is in the results as
``accuracy_text``.
"""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits
from promptweave.data.loaders.hub import read_folder
from promptweave.data.sources import Split


def hle(ctx: LoadContext, path: str, category: str | None = None) -> Splits:
    """Humanity's Last Exam: the test split's text-only questions (``image == ''``), optionally one ``category``;
    ``question`` renamed ``problem``; the same rows as train and test."""
    got = read_folder(ctx, ctx.find(path))
    if not isinstance(got, dict) or "test" not in got:
        raise ctx.fail("the HLE dataset needs a test split", file=ctx.find(path))
    part = got["test"]
    items, where = [], []
    for i, row in enumerate(part.rows):
        if row.get("image") != "" or (category and row.get("category") != category):
            continue
        new = {("problem" if k == "question" else k): v for k, v in row.items()}
        items.append(new)
        where.append(part.locate(i))
    out = dict(got)
    out["train"] = out["test"] = Split(items, part.file, where)
    return out


LOADERS = {
    "HLEDataset": hle,
}


# -- scoring --------------------------------------------------------------------------------------------------
import json
import math
import re
from typing import Any

import numpy as np

from promptweave.data.loaders.base import rows
from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator
from promptweave.prompt.multimodal import build_content


def hle_parquet(ctx: LoadContext, path: str, **_: Any) -> Splits:
    """AISBench's HLE rows: one Parquet file, each row's question (and its image, when the row has one) as the
    multimodal ``content``, and ``answer``."""
    from promptweave.data.sources import read_parquet

    f = ctx.find(path)
    split = read_parquet(f)
    items = []
    for loc, r in zip(split.where, split.rows):
        parts = [("text", str(r.get("question") or ""))]
        image = r.get("image")
        if isinstance(image, str) and image:
            parts.append(("image", image))
        items.append((loc, {"content": build_content(parts), "answer": r.get("answer") or ""}))
    return rows(items, f)


def parse_verdict(reply: Any) -> dict[str, Any] | None:
    """The judge's JSON verdict (line breaks and runs of spaces collapsed first), or None when it is not one."""
    text = re.sub(r"\s+", " ", re.sub(r"[\n\t\r]+", " ", "" if reply is None else str(reply)))
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def calibration_error(confidence: np.ndarray, correct: np.ndarray, beta: int = 100) -> float:
    """RMS gap between mean confidence and accuracy over bins of ``beta`` rows (sorted by confidence)."""
    order = np.argsort(confidence)
    confidence, correct = confidence[order], correct[order]
    bins = len(confidence) // beta
    if bins == 0:
        return float(np.abs(np.nanmean(confidence) - np.nanmean(correct)))
    edges = [[i * beta, (i + 1) * beta] for i in range(bins)]
    edges[-1] = [edges[-1][0], len(confidence)]
    total = len(confidence)
    err = 0.0
    for lo, hi in edges[:-1]:  # the reference's loop stops before the last bin
        if hi > lo:
            gap = np.abs(np.nanmean(confidence[lo:hi]) - np.nanmean(correct[lo:hi]))
            err += (hi - lo) / total * float(np.square(gap))
    return math.sqrt(err)


class HLEJudgeEvaluator(Evaluator):
    """HLE's judged accuracy and calibration (see the module doc)."""

    name = "HLEJudgeEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        if len(predictions) != len(references):
            raise EvaluationError(f"{self.name}: {len(predictions)} predictions but {len(references)} references",
                                  field="evaluator", expected="one judge reply per test row")
        n = len(references)
        verdicts = [parse_verdict(p) for p in predictions]
        parsed = [v for v in verdicts if v is not None]
        rows: list[bool | None] = [None if v is None else "yes" in str(v.get("correct") or "") for v in verdicts]
        details = [{"verdict": v, "correct": ok} for v, ok in zip(verdicts, rows)]
        if not parsed or not n:
            return Scores({"accuracy": 0.0, "confidence_half_width": 0.0, "calibration_error": 0.0,
                           "sample_num": float(n)}, rows, details, extra={"accuracy_text": "0%"})
        correct = np.array(["yes" in str(v.get("correct") or "") for v in parsed])
        confidence = np.array([float(v.get("confidence") or 0) for v in parsed]) / 100
        accuracy = round(100 * int(correct.sum()) / n, 2)
        half = round(1.96 * math.sqrt(accuracy * (100 - accuracy) / n), 2)
        calib = 100 * round(calibration_error(confidence, correct.astype(float)), 2)
        return Scores({"accuracy": accuracy, "confidence_half_width": half, "calibration_error": calib,
                       "sample_num": float(n)}, rows, details,
                      extra={"accuracy_text": f"{accuracy}% +/- {half}%"})


EVALUATORS = {"ais_bench:HLEJudgeEvaluator": HLEJudgeEvaluator, "HLEJudgeEvaluator": HLEJudgeEvaluator}
# AISBench's HLEDataset (OpenCompass's, of the same name, reads a hub folder: data/loaders/hub.py)
LOADERS = {**LOADERS, "ais_bench:HLEDataset": hle_parquet}
