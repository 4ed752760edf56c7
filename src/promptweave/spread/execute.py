"""Running a spread: every variant of every dataset × model as an ordinary ``run`` task.

Variant ``k``'s predictions and results go to ``DIR/variants/<k>/`` in ``run``'s layout, written by
``run``'s own task execution (``run.execute.execute_task``); every call goes through the one response
cache ``DIR/cache.sqlite``, so variant 0 shares its answers with a plain ``run -w DIR`` of the same
config and a rerun sends nothing. The figures are computed from the written results and predictions.
"""
from __future__ import annotations

import dataclasses
import gc
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from promptweave.spread.variants import Variant, dataset_variants, with_variants

VARIANTS_DIR = "variants"
SPREAD_FILE = "spread.json"


@dataclass
class SpreadRequest:
    """A spread as the CLI asks for it."""

    config: Any
    workdir: Path
    datasets: Sequence[int]
    models: Sequence[int]
    n: int = 16
    seed: int = 0
    limit: int | None = None
    allow_code: bool = False
    on_row_error: str = "wrong"
    show_progress: bool = True
    console: Any = None
    prepare: Callable[[list], None] | None = None
    wait: bool = True
    notify: Callable[[str], None] | None = None
    executor: str = "local"
    executor_options: dict = field(default_factory=dict)


def variant_dir(workdir: Path, k: int) -> Path:
    return Path(workdir) / VARIANTS_DIR / str(k)


def plan_variants(req: SpreadRequest) -> dict[int, list[Variant]]:
    """Each selected dataset's variants (index → list; variant 0 first)."""
    cfg = req.config
    return {i: dataset_variants(cfg.datasets[i], req.n, req.seed, file=str(cfg.path), where=f"datasets[{i}]")
            for i in req.datasets}


def variant_spec(base: Any, variant: Variant, *, file: str, where: str) -> Any:
    """The opened dataset ``base`` with ``variant``'s templates: its rows and retriever are shared, not reloaded."""
    if variant.index == 0:
        return base
    from promptweave.engine.spec import DatasetSpec

    spec = DatasetSpec.from_config(variant.dataset, train=[], test=[], file=file, field_path=where,
                                   check_columns=False)
    return dataclasses.replace(base, prompt_template=spec.prompt_template, ice_template=spec.ice_template)


def plan_tasks(req: SpreadRequest, variants: dict[int, list[Variant]]) -> dict[int, list]:
    """Variant k → its planned tasks (``run``'s planner on the config with variant k's templates; each dataset's
    rows read once and shared by its variants)."""
    from promptweave.engine.open import open_dataset
    from promptweave.run.plan import plan_config

    cfg = req.config
    base = {i: open_dataset(cfg, i) for i in variants}
    out: dict[int, list] = {}
    for k in range(max(len(v) for v in variants.values())):
        have = {i: v[k] for i, v in variants.items() if k < len(v)}
        opened = {i: variant_spec(base[i], var, file=str(cfg.path), where=f"datasets[{i}]")
                  for i, var in have.items()}
        tasks = plan_config(with_variants(cfg, have), limit=req.limit, allow_code=req.allow_code, datasets=list(have),
                     models=list(req.models), opened=opened)
        if req.prepare is not None:
            req.prepare(tasks)
        out[k] = tasks
    return out


def run_local(req: SpreadRequest, planned: dict[int, list]) -> dict[int, list]:
    """Execute every variant's tasks in this process, each model built once, through one shared cache."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from promptweave.errors import PromptweaveError
    from promptweave.infer import ResponseCache
    from promptweave.run.execute import CACHE_FILE, execute_task, task_failed, write_atomic
    from promptweave.run.lock import workdir_lock

    workdir = Path(req.workdir)
    outcomes: dict[int, list] = {k: [] for k in planned}
    by_model: dict[str, list[tuple[int, Any]]] = {}
    for k, tasks in planned.items():
        for t in tasks:
            by_model.setdefault(t.model_name, []).append((k, t))
    with workdir_lock(workdir, wait=req.wait, notify=req.notify), ResponseCache(workdir / CACHE_FILE) as cache, \
            Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                     console=req.console, disable=not req.show_progress, transient=False) as bar:
        for name, group in by_model.items():
            bid = bar.add_task(f"{name} · {len(planned)} variant(s)", total=sum(t.calls for _, t in group))
            try:
                model = group[0][1].make_model()
            except PromptweaveError as exc:  # a model that cannot be built fails its tasks, as in run
                for k, t in group:
                    outcomes[k].append(task_failed(t, variant_dir(workdir, k), str(exc)))
                continue
            for k, t in group:
                outcomes[k].append(execute_task(t, model, variant_dir(workdir, k), cache,
                                                partial(bar.advance, bid),
                                                on_row_error=req.on_row_error))
            del model
            gc.collect()
        for k, outs in outcomes.items():
            write_atomic(variant_dir(workdir, k) / "summary.json",
                         json.dumps([{**o.__dict__} for o in outs], indent=2, ensure_ascii=False, default=str),
                         root=workdir)
    return outcomes


def run_ray(req: SpreadRequest, variants: dict[int, list[Variant]]) -> dict[int, list]:
    """Each variant through the Ray executor (prompts built where each shard runs), one shared cache."""
    from promptweave.run.executors import make_executor
    from promptweave.run.lock import workdir_lock

    workdir = Path(req.workdir)
    outcomes: dict[int, list] = {}
    runner = make_executor("ray", **req.executor_options)
    with workdir_lock(workdir, wait=req.wait, notify=req.notify):  # one spread per DIR, as in the local path
        for k in range(max(len(v) for v in variants.values())):
            outcomes[k] = _ray_variant(req, runner, variants, k, workdir)
    return outcomes


def _ray_variant(req: SpreadRequest, runner: Any, variants: dict[int, list[Variant]], k: int, workdir: Path) -> list:
    from promptweave.run.execute import CACHE_FILE
    from promptweave.run.executors import RunRequest

    have = {i: v[k] for i, v in variants.items() if k < len(v)}
    rr = RunRequest(with_variants(req.config, have), variant_dir(workdir, k), list(have), list(req.models),
                    req.limit, req.allow_code, show_progress=req.show_progress, console=req.console,
                    prepare=req.prepare, on_row_error=req.on_row_error, wait=req.wait, notify=req.notify,
                    cache_path=workdir / CACHE_FILE)
    return runner.run(rr)


def _read_work_file(path: Path) -> str | None:
    """A file the variant's run wrote, read only if it is a regular file in its own folder (no link out)."""
    from promptweave.errors import WorkdirFileError
    from promptweave.safe_files import read_regular

    try:
        return read_regular(path, max_bytes=1 << 34, root=path.parent).decode("utf-8")
    except (WorkdirFileError, ValueError):
        return None


def _read_results(path: Path) -> dict[str, Any] | None:
    text = _read_work_file(path)
    try:
        got = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return None
    return got if isinstance(got, dict) else None


def headline(metrics: dict[str, Any]) -> tuple[str | None, float | None]:
    """The figure a spread compares: ``accuracy`` if the evaluator reports it, else its first number."""
    for name in ("accuracy", "score"):
        if isinstance(metrics.get(name), (int, float)) and not isinstance(metrics.get(name), bool):
            return name, float(metrics[name])
    for name, value in metrics.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return name, float(value)
    return None, None


def _row_results(path: Path) -> list[float | None] | None:
    """Per-row results (1 correct, 0 not, None unscored) in row order, from a predictions file."""
    text = _read_work_file(path)
    if text is None:
        return None
    try:
        rows = sorted((json.loads(line) for line in text.splitlines() if line.strip()),
                      key=lambda r: r.get("index", 0))
    except (ValueError, RecursionError, TypeError, AttributeError):
        return None
    out: list[float | None] = []
    for r in rows:
        c = r.get("correct")
        out.append(None if c is None else float(bool(c)) if isinstance(c, bool) else float(c))
    return out


def figures(req: SpreadRequest, variants: dict[int, list[Variant]]) -> dict[str, Any]:
    """``spread.json``'s content, read back from the variants' results and predictions files."""
    from promptweave.models.factory import model_name
    from promptweave.run.execute import predictions_path, results_path
    from promptweave.run.task import Task
    from promptweave.spread.stats import rankings, robustness, summarize

    cfg, workdir = req.config, Path(req.workdir)
    out: dict[str, Any] = {"config": str(cfg.path), "seed": req.seed, "n": req.n, "limit": req.limit,
                           "datasets": [], "figures": [], "rankings": []}
    for i, vs in variants.items():
        ds = task_dataset_name(cfg.datasets[i])
        out["datasets"].append({"dataset": ds, "variants": [v.to_json() for v in vs]})
        by_model: dict[str, list[float | None]] = {}
        for j in req.models:
            m = model_name(cfg.models[j])
            probe = Task(dataset=ds, model_name=m, make_model=lambda: None, records=[])
            scores: list[float | None] = []
            table: list[list[float | None]] = []
            points = []
            metric_name = None
            for v in vs:
                vdir = variant_dir(workdir, v.index)
                res = _read_results(results_path(vdir, probe)) or {}
                name, score = headline(res.get("metrics") or {}) if res.get("status") == "done" else (None, None)
                metric_name = metric_name or name
                ppath = predictions_path(vdir, probe)
                rows = _row_results(ppath) if score is not None else None
                scores.append(score)
                table.append(rows or [])
                points.append({"variant": v.index, "score": score, "description": v.description,
                               "status": res.get("status", "missing"), "error": res.get("error"),
                               "results": str(results_path(vdir, probe)), "predictions": str(ppath)})
            summary = summarize(scores, table if any(table) else None, seed=req.seed)
            by_model[m] = scores
            out["figures"].append({"dataset": ds, "model": m, "metric": metric_name, "points": points, **summary})
        out["rankings"].append({"dataset": ds, **rankings(by_model)})
        if len(by_model) > 1:
            out.setdefault("robustness", []).append({"dataset": ds, **robustness(by_model, seed=req.seed)})
    return out


def task_dataset_name(raw: Any) -> str:
    """The dataset name a planned task carries (``DatasetSpec.abbr``'s rule), which its files are named by."""
    return str(raw.get("abbr") or raw.get("path") or "dataset")


def write_spread(workdir: Path, data: dict[str, Any]) -> Path:
    from promptweave.run.execute import write_atomic

    path = Path(workdir) / SPREAD_FILE
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str), root=Path(workdir))
    return path


def run_spread(req: SpreadRequest) -> tuple[dict[str, Any], dict[int, list]]:
    """Plan, run and summarise a spread; ``DIR/spread.json`` is written. Returns (figures, outcomes by variant)."""
    variants = plan_variants(req)
    if req.executor == "ray":
        outcomes = run_ray(req, variants)
    else:
        outcomes = run_local(req, plan_tasks(req, variants))
    data = figures(req, variants)
    write_spread(req.workdir, data)
    return data, outcomes


def run_search(req: SpreadRequest, budget: int) -> dict[str, Any]:
    """``--search extremes``: per dataset × model, the best and worst variant within ``budget`` calls
    (``spread.search``), through the shared cache; ``DIR/spread.json`` holds the variants and the findings."""
    from promptweave.infer import ResponseCache
    from promptweave.run.execute import CACHE_FILE
    from promptweave.run.lock import workdir_lock
    from promptweave.spread.search import search_extremes

    variants = plan_variants(req)
    planned = plan_tasks(req, variants)
    workdir = Path(req.workdir)
    pairs: dict[tuple[str, str], list] = {}
    for k in sorted(planned):
        for t in planned[k]:
            pairs.setdefault((t.dataset, t.model_name), []).append(t)
    found = []
    with workdir_lock(workdir, wait=req.wait, notify=req.notify), ResponseCache(workdir / CACHE_FILE) as cache:
        models: dict[str, Any] = {}
        first = {m: n for n, m in enumerate(dict.fromkeys(m for _, m in pairs))}
        for (ds, m), tasks in sorted(pairs.items(), key=lambda kv: first[kv[0][1]]):  # each model loaded once
            if m not in models:
                models.clear()  # one model loaded at a time
                gc.collect()
                models[m] = tasks[0].make_model()
            got = search_extremes(tasks, models[m], cache, budget, seed=req.seed)
            by_k = {v.index: v for vs in variants.values() for v in vs if task_dataset_name(v.dataset) == ds}
            for key in ("best", "worst"):
                v = by_k.get(got[key])
                got[f"{key}_description"] = None if v is None else v.description
            found.append({"dataset": ds, "model": m, **got})
    data = {"config": str(req.config.path), "seed": req.seed, "n": req.n, "limit": req.limit,
            "datasets": [{"dataset": task_dataset_name(req.config.datasets[i]), "variants": [v.to_json() for v in vs]}
                         for i, vs in variants.items()],
            "search": found}
    write_spread(workdir, data)
    return data


__all__ = ["run_search", "SPREAD_FILE", "SpreadRequest", "VARIANTS_DIR", "figures", "headline", "plan_tasks", "plan_variants",
           "run_spread", "variant_dir", "variant_spec", "write_spread"]
