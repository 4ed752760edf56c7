"""CIBench's ``CIBenchEvaluator``: each turn of an agent's chat scored from the code interpreter's last result.

It reads the agent's recorded ``steps`` (one list of actions per user turn, written by ``AgentInferencer`` every /
every_with_gt, :mod:`promptweave.forms.agent_loop`), the row's ``references`` (the gold notebook's outputs and tags) and
the user messages. Per turn, the last ``IPythonInterpreter`` action decides:

* ``tool_rate``: the turn used the interpreter; ``executable``: its last code ran without an error;
* ``general_correct`` / ``numeric_correct``: the gold output equals, or is contained in, the ``execute_result``
  block of the result (else its ``stdout`` block);
* ``text_score``: ROUGE-1 (the text evaluator's metric) of the result's first fenced block against the gold text;
* ``vis_sim``: SSIM between the figure drawn and the gold PNG (needs scikit-image, ``promptweave[cibench]``).
  Without it the reference's try/except scores every figure 0; here a dataset whose notebooks have figure steps
  is refused at plan time instead, naming the extra (``requires_for``).

Notebooks declaring ``metadata.step_types`` are scored with those tags (``exec`` / ``num`` / ``text`` / ``vis``),
the others with the output's own tag (``exec`` / ``general`` / ``vis``). Each metric is the mean ×100 over the
turns that have it, ``-1`` when none has. The reference also writes each experiment as markdown (and, with
``with_ipynb``, re-executes it with jupytext); those files are not written here.
"""
from __future__ import annotations

import base64
import io
import re
from collections.abc import Mapping, Sequence
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores

TOOL = "IPythonInterpreter"
_KEYS = {"exec": "executable", "general": "general_correct", "num": "numeric_correct", "text": "text_score",
         "vis": "vis_sim"}


def _last_tool(step: Sequence[Any]) -> list[Mapping[str, Any]]:
    return [a for a in reversed(list(step or [])) if isinstance(a, Mapping) and a.get("type") == TOOL]


def valid_step(step: Sequence[Any]) -> tuple[bool, bool]:
    """(the turn used the interpreter, its last code ran without an error)."""
    tools = _last_tool(step)
    if not tools:
        return False, False
    return True, not tools[0].get("errmsg")


def correct_step(step: Sequence[Any], target: Any) -> dict[str, Any]:
    for action in _last_tool(step):
        result = action.get("result")
        if not result:
            continue
        try:
            pred = result["text"]
            m_exec = re.search("execute_result:\n\n```\n(.*?)\n```", pred, re.DOTALL)
            m_out = re.search("stdout:\n\n```\n(.*?)\n```", pred, re.DOTALL)
            m = m_exec or m_out
            if m:
                out = m.group(1)
                ok = out.strip() == target.strip() or target.strip() in out.strip()
                return {"score": ok, "gt": target, "pred": out}
        except Exception:  # noqa: BLE001 - a malformed record scores 0, as in the reference
            return {"score": 0, "gt": target}
    return {"score": 0, "gt": target}


def _ssim(pred_path: str, target_b64: str) -> float:
    import numpy as np
    import skimage  # noqa: F401 - the optional dependency, checked by the caller
    import skimage.io
    import skimage.metrics
    import skimage.transform

    target = skimage.io.imread(io.BytesIO(base64.b64decode(target_b64)), plugin="imageio")
    pred = skimage.io.imread(pred_path, plugin="imageio")
    pred = (255 * skimage.transform.resize(pred, target.shape[:2])).astype(np.uint8)
    return float(skimage.metrics.structural_similarity(pred, target, channel_axis=-1))


def _has_figure(row: Any) -> bool:
    """Whether a row's references (any of its dict values holding ``tags`` / ``metadata.step_types``) have a
    ``vis`` step."""
    if not isinstance(row, Mapping):
        return False
    for value in row.values():
        if isinstance(value, Mapping):
            meta = value.get("metadata")
            steps = (meta.get("step_types") if isinstance(meta, Mapping) else None) or value.get("tags") or ()
            if isinstance(steps, (list, tuple)) and "vis" in steps:
                return True
    return False


class CIBenchEvaluator:
    """CIBench's metrics from the agent's steps (see the module docstring); ``needs`` the recorded ``steps``."""

    name = "CIBenchEvaluator"
    needs = frozenset({"steps"})

    def __init__(self, text_evaluator: Mapping[str, Any] | None = None, vis_evaluator: Any = None,
                 output_dir: Any = None, with_ipynb: bool = False, lang: str = "en", user_data_dir: str = "ENV",
                 **_ignored: Any) -> None:
        from promptweave.evaluate.evaluators import RougeEvaluator

        if vis_evaluator is not None:
            raise EvaluationError("CIBenchEvaluator's vis_evaluator (a VLMEvalKit model judging the figures) is not "
                                  "supported; leave it unset to score figures by SSIM", field="evaluator.vis_evaluator",
                                  value=vis_evaluator)
        if lang not in ("en", "cn"):
            raise EvaluationError("lang must be 'en' or 'cn'", field="evaluator.lang", value=lang)
        if text_evaluator is None:
            self.text_evaluator: Any = RougeEvaluator()
            self.text_metric = "rouge1"
        else:
            from promptweave.evaluate.config import build_evaluator

            cfg = dict(text_evaluator)
            self.text_metric = cfg.pop("metric_name", None)
            if not isinstance(self.text_metric, str):
                raise EvaluationError("text_evaluator needs a 'metric_name' (the metric it reports, e.g. rouge1)",
                                      field="evaluator.text_evaluator.metric_name", value=self.text_metric)
            self.text_evaluator = build_evaluator(cfg, "eval_cfg.evaluator.text_evaluator")
        self.notes: list[str] = []

    def requires_for(self, rows: Sequence[Any]) -> tuple[tuple[str, str], ...]:
        """scikit-image where a row's gold notebook has a figure step (``vis``), checked at plan time."""
        return (("skimage", "cibench"),) if any(_has_figure(r) for r in rows) else ()

    def text_step(self, step: Sequence[Any], target: Any) -> dict[str, Any]:
        for action in _last_tool(step):
            result = action.get("result")
            if not result:
                continue
            try:
                m = re.search("```\n(.*?)\n```", result["text"], re.DOTALL)
                if m:
                    out = m.group(1)
                    got = self.text_evaluator.score([out], [target]).metrics[self.text_metric] / 100
                    return {"score": got, "gt_text": target, "pred_text": out}
            except Exception:  # noqa: BLE001
                return {"score": 0, "gt_text": target}
        return {"score": 0, "gt_text": target}

    def vis_step(self, step: Sequence[Any], target: Any) -> dict[str, Any]:
        for action in _last_tool(step):
            result = action.get("result")
            if not result:
                continue
            try:
                m = re.search(r"!\[fig-[0-9]*\]\((.*?)\)", result["image_path"], re.DOTALL)
                img = m.group(1) if m else None
                try:
                    import skimage  # noqa: F401
                except ImportError:
                    note = "vis_sim: scikit-image is not installed, so every figure scores 0 (as in the reference)"
                    if note not in self.notes:
                        self.notes.append(note)
                    return {"score": 0}
                return {"score": _ssim(str(img), target), "pred_img": img}
            except Exception:  # noqa: BLE001
                return {"score": 0}
        return {"score": 0}

    def experiment(self, gold: Mapping[str, Any], steps: Sequence[Any]) -> tuple[dict[str, list], list[dict]]:
        tags, outputs = list(gold.get("tags") or []), list(gold.get("outputs") or [])
        hard = list((gold.get("metadata") or {}).get("step_types") or [])
        if hard:
            tags = hard
        result: dict[str, list] = {_KEYS[t]: [] for t in (("exec", "num", "text", "vis") if hard
                                                           else ("exec", "general", "vis"))}
        result["tool_rate"] = []
        details = []
        for tag, step, output in zip(tags, steps, outputs):
            used, ran = valid_step(step)
            result["tool_rate"].append(used)
            result["executable"].append(ran)
            out: dict[str, Any] = {}
            if tag != "exec":
                if tag in ("general", "num"):
                    out = correct_step(step, output)
                elif tag == "text":
                    out = self.text_step(step, output)
                elif tag == "vis":
                    out = self.vis_step(step, output)
                else:
                    raise EvaluationError("unknown CIBench step type", field="references.metadata.step_types",
                                          value=tag, expected="exec, num, text or vis")
                result.setdefault(_KEYS[tag], []).append(out["score"])
            details.append(out)
        return result, details

    def score(self, predictions: Sequence[Any], references: Sequence[Any], ctx: EvalContext | None = None) -> Scores:
        steps = list(getattr(ctx, "steps", None) or [])
        if len(steps) != len(references):
            raise EvaluationError("CIBenchEvaluator needs the agent's recorded steps for every row (AgentInferencer "
                                  "every / every_with_gt writes them)", field="evaluator", value=len(steps),
                                  expected=f"{len(references)} rows of steps")
        totals: dict[str, float] = {}
        counts: dict[str, int] = {}
        details = []
        for gold, row_steps in zip(references, steps):
            if not isinstance(gold, Mapping):
                raise EvaluationError("CIBenchEvaluator's gold is the row's references dict (outputs, tags, "
                                      "metadata)", field="reader_cfg.output_column", value=type(gold).__name__)
            res, det = self.experiment(gold, row_steps or [])
            for k, v in res.items():
                totals[k] = totals.get(k, 0.0) + float(sum(v))
                counts[k] = counts.get(k, 0) + len(v)
            details.append({"turns": det, "scores": {k: [float(x) for x in v] for k, v in res.items()}})
        metrics = {k: (totals[k] / counts[k] * 100 if counts[k] else -1) for k in totals}
        extra = {"notes": list(self.notes)} if self.notes else {}
        return Scores(metrics, [None] * len(references), details, extra)


__all__ = ["CIBenchEvaluator", "correct_step", "valid_step"]
