"""Finding the best and worst variant within a call budget: Thompson sampling over variants.

FormatSpread (Sclar et al. 2023) frames the search for the extreme formats as a bandit whose arms are
formats and whose reward is a row's correctness. Here each arm's unknown score is its accuracy over the
task's rows. Rows are drawn for every arm in one shared, seeded order (so arms are compared on the same
rows). An arm's posterior is Beta(1 + correct, 1 + wrong) on its accuracy; because the rows are finite,
a posterior draw of its score is ``(correct + Binomial(unseen rows, p)) / rows`` with ``p`` from that
Beta, which is exact once every row is seen. Each round one draw picks the arm that looks best and
one the arm that looks worst, and each is given its next row. The search stops when, over posterior
draws, the leading arm is the best (and the trailing one the worst) with probability ``confidence``,
or when the next row would pass the budget.

A row's correctness is the dataset's evaluator on that row alone (per-row verdicts; an evaluator that
gives none, such as corpus BLEU, cannot be searched this way). A failed row counts as wrong.
"""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from promptweave.errors import ConfigError, UnsupportedError

CONFIDENCE = 0.95
DRAWS = 1000
INITIAL_ROWS = 2  # rows every arm gets before sampling starts
SEARCHABLE = ("gen", "ppl", "clp")  # one prediction row per test row, judged alone


@dataclass
class Arm:
    variant: int
    task: Any
    rows: dict[int, list] = field(default_factory=dict)  # row index → its records
    calls_per_row: int = 1
    correct: int = 0
    seen: int = 0

    @property
    def total(self) -> int:
        return len(self.rows)

    def draws(self, rng: Any, size: int) -> Any:
        """``size`` posterior draws of this arm's accuracy over all its rows."""
        import numpy as np

        unseen = self.total - self.seen
        if unseen <= 0:
            return np.full(size, self.correct / max(1, self.total))
        p = rng.beta(1 + self.correct, 1 + self.seen - self.correct, size=size)
        return (self.correct + rng.binomial(unseen, p)) / self.total


def _group(task: Any) -> dict[int, list]:
    rows: dict[int, list] = {}
    for r in task.records:
        rows.setdefault(r.index, []).append(r)
    return rows


def _verdicts(task: Any, preds: list[dict[str, Any]], cache: Any) -> list[bool]:
    """Each prediction row's verdict by the dataset's evaluator (a failed row is wrong)."""
    ev = task.evaluation
    keep = [p for p in preds if "error" not in p]
    out = {p["index"]: False for p in preds}
    if keep:
        ctx = ev.context([p["index"] for p in keep], prompts=[p.get("prompt") for p in keep], cache=cache)
        scores = ev.score([p["prediction"] for p in keep], [ev.process_gold(p["gold"]) for p in keep], ctx)
        for p, ok in zip(keep, scores.correct):
            if ok is None:
                raise UnsupportedError("--search extremes needs an evaluator that judges each row; "
                                       f"{ev.evaluator_name} scores only the whole set",
                                       field="eval_cfg.evaluator", value=ev.evaluator_name,
                                       expected="an evaluator with per-row verdicts (AccEvaluator, EMEvaluator, ...)")
            out[p["index"]] = bool(ok)
    return [out[p["index"]] for p in preds]


def search_extremes(tasks: Sequence[Any], model: Any, cache: Any, budget: int, *, seed: int = 0,
                    confidence: float = CONFIDENCE) -> dict[str, Any]:
    """Best and worst of ``tasks`` (one per variant, same dataset × model) within ``budget`` model calls.

    Returns the variants found, the calls used (requests the search needed, cached or not) and those
    sent, each arm's rows seen and accuracy so far, and the 95% posterior interval of the best and worst
    arms' scores.
    """
    import numpy as np

    from promptweave.run.execute import infer_rows

    rng = np.random.default_rng(random.Random(f"promptweave-spread-search:{seed}").getrandbits(64))  # any int seed
    for t in tasks:
        if t.mode not in SEARCHABLE:
            raise UnsupportedError("--search extremes scores one row at a time, which this inferencer does not",
                                   field="infer_cfg.inferencer", value=t.mode,
                                   expected="a " + " / ".join(SEARCHABLE) + " dataset, or a full spread (no --search)")
    arms = []
    for k, t in enumerate(tasks):
        rows = _group(t)
        arms.append(Arm(k, t, rows, max(1, max((len(v) for v in rows.values()), default=1))))
    order = sorted(set().union(*(a.rows for a in arms))) if arms else []
    rng.shuffle(order)
    writes_before = getattr(cache, "writes", 0)
    used = 0

    def pull(pulls: dict[int, int]) -> bool:
        """Give each arm its next ``pulls[k]`` rows; False if the budget does not allow them all."""
        nonlocal used
        plan = {}
        for k, count in pulls.items():
            arm = arms[k]
            rows = [i for i in order[arm.seen:arm.seen + count] if i in arm.rows]
            if rows:
                plan[k] = rows
        cost = sum(len(rows) * arms[k].calls_per_row for k, rows in plan.items())
        if not plan or used + cost > budget:
            return False
        for k, rows in plan.items():
            arm = arms[k]
            sub = dataclasses.replace(arm.task, records=[r for i in rows for r in arm.rows[i]])
            preds, _ = infer_rows(sub, model, cache)
            verdicts = _verdicts(arm.task, preds, cache)
            arm.seen += len(rows)
            arm.correct += sum(verdicts)
            used += len(rows) * arm.calls_per_row
        return True

    def certainty() -> tuple[int, float, int, float, Any]:
        draws = np.stack([a.draws(rng, DRAWS) for a in arms], axis=1)  # DRAWS × arms
        best_hits = np.bincount(draws.argmax(axis=1), minlength=len(arms))
        worst_hits = np.bincount(draws.argmin(axis=1), minlength=len(arms))
        b, w = int(best_hits.argmax()), int(worst_hits.argmax())
        return b, float(best_hits[b] / DRAWS), w, float(worst_hits[w] / DRAWS), draws

    first = sum(a.calls_per_row for a in arms)  # one row of every variant
    if arms and budget < first:
        raise ConfigError("the budget does not cover one row of every variant", field="--budget", value=budget,
                          expected=f"at least {first} calls (more than {INITIAL_ROWS * first} to search)")
    stopped = "budget"
    if arms and pull({a.variant: max(1, min(INITIAL_ROWS, budget // first)) for a in arms}):
        while True:
            b, pb, w, pw, _ = certainty()
            if pb >= confidence and pw >= confidence:
                stopped = "confident"
                break
            d = [float(a.draws(rng, 1)[0]) for a in arms]
            hi = max((k for k in range(len(arms)) if arms[k].seen < arms[k].total), key=lambda k: d[k],
                     default=None)
            lo = min((k for k in range(len(arms)) if arms[k].seen < arms[k].total), key=lambda k: d[k],
                     default=None)
            if hi is None or lo is None:
                stopped = "every row seen"
                break
            want = {hi: 1}
            want[lo] = want.get(lo, 0) + 1
            if not pull(want) and not pull({hi: 1}):
                break
    best, pb, worst, pw, draws = certainty() if arms else (None, 0.0, None, 0.0, np.zeros((0, 0)))

    def interval(k: int | None) -> list[float] | None:
        if k is None:
            return None
        lo, hi = np.quantile(draws[:, k], [0.025, 0.975])
        return [100 * float(lo), 100 * float(hi)]  # in percent, as accuracy is reported

    return {
        "budget": budget, "calls_used": used, "sent": getattr(cache, "writes", 0) - writes_before,
        "stopped": stopped, "confidence": confidence,
        "best": None if best is None else arms[best].variant, "p_best": pb, "best_interval": interval(best),
        "worst": None if worst is None else arms[worst].variant, "p_worst": pw, "worst_interval": interval(worst),
        "arms": [{"variant": a.variant, "rows_seen": a.seen, "rows": a.total, "correct": a.correct,
                  "accuracy_seen": 100 * a.correct / a.seen if a.seen else None} for a in arms],
    }


__all__ = ["search_extremes"]
