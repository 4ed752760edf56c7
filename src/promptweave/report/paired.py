"""Two runs compared row by row: which tasks pair, the paired difference, its interval and its test.

Tasks pair by (dataset, model); when each run holds a single model under different abbrs (a checkpoint against
its successor), they pair by dataset and :attr:`Pairing.note` says which abbrs were paired. Rows pair by their
key (index, and turn for multi-turn rows). A metric that is the share of rows correct gets the exact McNemar test
on the discordant rows and Newcombe's paired interval, in the metric's units; a metric that is not (a corpus BLEU)
gets its delta without a test. With several comparisons, Holm-adjusted p-values stand beside the raw ones.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from promptweave.evaluate.intervals import holm, mcnemar_exact, newcombe_paired
from promptweave.report.rows import row_key
from promptweave.report.workdir import TaskResult, WorkDir, iter_predictions

ALPHA = 0.05


@dataclass
class Pairing:
    pairs: list[tuple[TaskResult, TaskResult]] = field(default_factory=list)
    note: str | None = None  # set when tasks were paired by dataset across model abbrs


def pair_tasks(a: WorkDir, b: WorkDir) -> Pairing:
    """The (A task, B task) pairs to compare."""
    out = Pairing()
    for ta in a.tasks:
        tb = b.task(ta.model, ta.dataset)
        if tb is not None:
            out.pairs.append((ta, tb))
    if out.pairs:
        return out
    if len(a.models) == 1 and len(b.models) == 1 and a.models != b.models:
        ma, mb = a.models[0], b.models[0]
        for ta in a.tasks:
            tb = b.task(mb, ta.dataset)
            if tb is not None:
                out.pairs.append((ta, tb))
        if out.pairs:
            out.note = f"paired by dataset: model {ma!r} in A with model {mb!r} in B"
    return out


def _verdicts(t: TaskResult, problems: list[str]) -> dict[Any, bool]:
    out: dict[Any, bool] = {}
    for row in iter_predictions(t.predictions, problems):
        if isinstance(row.get("correct"), bool):
            out[row_key(row)] = row["correct"]
    return out


def _factor(value: float, verdicts: dict[Any, bool]) -> float | None:
    if not verdicts:
        return None
    share = sum(verdicts.values()) / len(verdicts)
    for factor in (100.0, 1.0):
        if abs(value - factor * share) <= 1e-6 * max(1.0, factor):
            return factor
    return None


def compare_tasks(a: WorkDir, b: WorkDir) -> tuple[list[dict[str, Any]], str | None]:
    """One entry per paired (task, metric): the fields ``report A B --json`` writes, plus ``p_holm`` and
    ``significant``; and the pairing note."""
    pairing = pair_tasks(a, b)
    entries: list[dict[str, Any]] = []
    for ta, tb in pairing.pairs:
        va, vb = _verdicts(ta, a.problems), _verdicts(tb, b.problems)
        keys = [k for k in va if k in vb]
        for metric in ta.ordered_metrics() or []:
            sa, sb = ta.metrics.get(metric), tb.metrics.get(metric)
            if sa is None or sb is None:
                continue
            entry: dict[str, Any] = {"dataset": ta.dataset, "model_a": ta.model, "model_b": tb.model,
                                     "metric": metric, "a": sa, "b": sb, "delta": sb - sa, "ci95": None,
                                     "p_value": None, "test": "none (the metric is not the share of rows correct)",
                                     "n": len(keys)}
            fa, fb = _factor(sa, va), _factor(sb, vb)
            if keys and fa is not None and fa == fb:
                both = sum(1 for k in keys if va[k] and vb[k])
                only_a = sum(1 for k in keys if va[k] and not vb[k])
                only_b = sum(1 for k in keys if vb[k] and not va[k])
                neither = len(keys) - both - only_a - only_b
                lo, hi = newcombe_paired(both, only_a, only_b, neither)
                entry.update(ci95=[round(lo * fa, 6), round(hi * fa, 6)], p_value=mcnemar_exact(only_a, only_b),
                             test="mcnemar-exact (two-sided); interval: newcombe-paired",
                             discordant={"a_only": only_a, "b_only": only_b})
            entries.append(entry)
    for entry, adj in zip(entries, holm([e["p_value"] for e in entries]), strict=True):
        entry["p_holm"] = adj
        entry["significant"] = None if entry["p_value"] is None else entry["p_value"] < ALPHA
    return entries, pairing.note


def json_view(entries: list[dict[str, Any]], note: str | None) -> dict[str, Any]:
    """What ``report A B --json FILE`` writes."""
    keys = ("dataset", "model_a", "model_b", "metric", "a", "b", "delta", "ci95", "p_value", "p_holm", "test", "n",
            "significant")
    return {"tasks": [{k: e.get(k) for k in keys} for e in entries], "paired_by": "dataset" if note else "task",
            "note": note, "alpha": ALPHA}


def terminal_lines(entries: list[dict[str, Any]], note: str | None) -> list[str]:
    """One line per compared (task, metric) for the terminal, the pairing note first."""
    out = [note] if note else []
    for e in entries:
        line = f"{e['dataset']} · {e['model_a']}"
        if e["model_b"] != e["model_a"]:
            line += f" → {e['model_b']}"
        line += f" · {e['metric']}: {e['a']:.2f} → {e['b']:.2f} (Δ {e['delta']:+.2f}"
        if e["p_value"] is not None:
            lo, hi = e["ci95"]
            line += (f", 95% CI {lo:+.2f} to {hi:+.2f}, McNemar p = {e['p_value']:.3g}"
                     + (f", Holm p = {e['p_holm']:.3g}" if len(entries) > 1 else "")
                     + (", significant" if e["significant"] else ", not significant"))
        else:
            line += ", no paired test"
        out.append(line + f", n = {e['n']})")
    return out
