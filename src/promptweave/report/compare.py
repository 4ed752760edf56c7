"""Two runs side by side: score deltas, and every row whose prompt, answer or verdict changed (with a prompt diff)."""
from __future__ import annotations

from typing import Any

from promptweave.report.line_diff import line_opcodes
from promptweave.report.rows import prompt_text, row_key
from promptweave.report.workdir import WorkDir, iter_predictions


def score_deltas(a: WorkDir, b: WorkDir) -> list[dict[str, Any]]:
    """One entry per (dataset, model, metric) present in either run; ``delta`` is B − A where both have it."""
    out = []
    keys = list(dict.fromkeys([(t.dataset, t.model) for t in a.tasks] + [(t.dataset, t.model) for t in b.tasks]))
    for ds, model in keys:
        ta, tb = a.task(model, ds), b.task(model, ds)
        names = list(dict.fromkeys((ta.ordered_metrics() if ta else []) + (tb.ordered_metrics() if tb else [])))
        for metric in names or ["-"]:
            va = ta.metrics.get(metric) if ta else None
            vb = tb.metrics.get(metric) if tb else None
            out.append({"dataset": ds, "model": model, "metric": metric, "a": va, "b": vb,
                        "delta": None if va is None or vb is None else vb - va,
                        "a_status": ta.status if ta else "absent", "b_status": tb.status if tb else "absent"})
    return out


def prompt_diff(pa: Any, pb: Any) -> list[list[str]] | None:
    """Line diff of two prompts as ``[op, text]`` (op: ``=`` same, ``-`` only in A, ``+`` only in B), or None if equal."""
    if pa == pb:
        return None
    try:
        la, lb = prompt_text(pa).split("\n"), prompt_text(pb).split("\n")
    except RecursionError:  # a prompt nested past any real one (an edited predictions file): no line diff
        return [["-", "(prompt nested too deeply to compare)"], ["+", "(prompt nested too deeply to compare)"]]
    out: list[list[str]] = []
    for op, i1, i2, j1, j2 in line_opcodes(la, lb):  # near-linear on long prompts of repeated lines
        if op == "equal":
            out += [["=", x] for x in la[i1:i2]]
        else:
            out += [["-", x] for x in la[i1:i2]]
            out += [["+", x] for x in lb[j1:j2]]
    return out


def _verdict(row: dict) -> tuple[bool, bool]:
    return bool(row.get("correct")), "error" in row


def what_changed(ra: dict, rb: dict) -> list[str]:
    """Which of a row's prompt, answer (raw or postprocessed) and verdict differ between the two runs."""
    out = []
    if ra.get("prompt") != rb.get("prompt"):
        out.append("prompt")
    if ra.get("output") != rb.get("output") or ra.get("prediction") != rb.get("prediction"):
        out.append("answer")
    if _verdict(ra) != _verdict(rb):
        out.append("verdict")
    return out


def changed_rows(a: WorkDir, b: WorkDir, *, limit: int = 5000) -> list[dict[str, Any]]:
    """Per task in both runs: every row whose prompt, answer or verdict differs, each with both rows, what changed
    and the prompt diff; ``counts`` says how many rows changed in each way (a row may count in several), so a
    template change shows even when no verdict moves."""
    out = []
    for ta in a.tasks:
        tb = b.task(ta.model, ta.dataset)
        if tb is None or ta.predictions is None or tb.predictions is None:
            continue
        rows_a = {row_key(r): r for r in iter_predictions(ta.predictions)}
        changed, same, only, n_changed = [], 0, 0, 0
        counts = {"prompt": 0, "answer": 0, "verdict": 0}
        for rb in iter_predictions(tb.predictions):
            ra = rows_a.pop(row_key(rb), None)
            if ra is None:
                only += 1
                continue
            what = what_changed(ra, rb)
            if not what:
                same += 1
                continue
            n_changed += 1
            for w in what:
                counts[w] += 1
            if len(changed) < limit:
                changed.append({"a": ra, "b": rb, "what": what,
                                "diff": prompt_diff(ra.get("prompt"), rb.get("prompt"))})
        out.append({"model": ta.model, "dataset": ta.dataset, "changed": changed, "unchanged": same,
                    "unmatched": only + len(rows_a), "truncated": n_changed - len(changed), "counts": counts})
    return out
