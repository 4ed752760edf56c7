"""``run --mode perf`` and ``perf --concurrency``: a config's prompts (or synthetic ones) as streamed requests.

Concurrency is the model's ``batch_size`` (``--concurrency`` overrides it, one level at a time); pacing is its
``request_rate`` and ``traffic_cfg`` (``--rate`` overrides the rate). Request bodies are the ones accuracy mode
sends, with streaming on. Each (model, dataset, level) writes its files (``files.py``) and one index line.
"""
from __future__ import annotations

import itertools
import random
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from promptweave.errors import PerfAllFailedError, PerfConfigError, PerfError
from promptweave.forms.gen import ROW_OUT_LEN
from promptweave.infer.records import is_messages
from promptweave.models.base import GenerationParams
from promptweave.models.factory import build_model, cfg_get, generation_params, load_token_counter
from promptweave.models.openai_compat import OpenAICompatModel, run_sync
from promptweave.run.perf.client import LoadOutcome, PerfRequest, generate_load
from promptweave.run.perf.files import write_level
from promptweave.run.perf.schedule import Traffic, send_offsets, traffic_from
from promptweave.run.perf.stable import stable_window
from promptweave.run.perf.stats import StageFigures, stage_figures


@dataclass
class PerfLevel:
    """What one (model, dataset, concurrency) measured and where it went."""

    model: str
    dataset: str
    concurrency: int
    total: StageFigures
    stable: StageFigures | None
    files: list[Path]
    failed: int
    first_error: str = ""
    token_sources: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PerfOptions:
    """Overrides and limits of a perf run (None: the model config's own setting)."""

    concurrency: int | None = None
    rate: float | None = None
    requests: int | None = None
    duration: float | None = None
    synthetic: tuple[int, int] | None = None
    seed: int = 0
    stem_level: bool = False  # name the files ``<dataset>@c<N>`` (a sweep)
    executor: str = "local"  # or "ray": the load from several client processes (ray_load.py)
    workers: int | None = None  # ray: client processes per level (default: one per 64 streams, at most 8)
    address: str | None = None  # ray: the cluster to join (default: a local instance)


def _prompt_text(rendered: Any) -> str:
    if isinstance(rendered, str):
        return rendered
    if is_messages(rendered):
        return "".join(str(m.get("content", m.get("prompt", ""))) for m in rendered if isinstance(m, dict))
    raise PerfError("perf mode sends text or chat prompts; this task renders token ids", field="datasets[]")


def _stream_model(model: Any, name: str) -> OpenAICompatModel:
    if not isinstance(model, OpenAICompatModel):
        raise PerfError("perf mode measures a serving endpoint: the model must be an OpenAI-protocol HTTP model "
                        "(an AISBench service model, or OpenAI / OpenAISDK with base_url)",
                        field="models[].type", value=name)
    return model


def synthetic_prompts(n_in: int, counter: Callable[[str], int] | None, seed: int = 0) -> Callable[[int], str]:
    """``make(i)``: the i-th synthetic prompt, ``n_in`` tokens long by the model's tokenizer when there is one
    (else ``n_in`` words); words are drawn at random so no two prompts share a prefix a server could cache."""
    words = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
             "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango")

    def make(i: int) -> str:
        rng = random.Random(seed * 1_000_003 + i)
        k = n_in
        text = " ".join(rng.choice(words) for _ in range(k))
        if counter is None:
            return text
        for _ in range(8):  # a few corrections: tokenizers count a word as one or more tokens
            got = counter(text)
            if got == n_in or k <= 1:
                break
            k = max(1, round(k * n_in / max(got, 1)))
            text = " ".join(rng.choice(words) for _ in range(k))
        return text

    return make


def _row_requests(model: OpenAICompatModel, records: Any, params: GenerationParams, cycle: bool,
                  row_lens: dict | None = None) -> Iterator[PerfRequest]:
    def once() -> Iterator[PerfRequest]:
        for rec in records:
            p = params if not row_lens or rec.index not in row_lens else replace(
                params, max_out_len=row_lens[rec.index])
            path, body = model.stream_request(rec.rendered, p)
            yield PerfRequest(rec.index, path, body, _prompt_text(rec.rendered))

    if not cycle:
        yield from once()
        return
    while True:
        got = False
        for req in once():
            got = True
            yield req
        if not got:
            return


def _synthetic_requests(model: OpenAICompatModel, make: Callable[[int], str], params: GenerationParams,
                        ) -> Iterator[PerfRequest]:
    for i in itertools.count():
        text = make(i)
        path, body = model.stream_request(text, params)
        body = {**body, "ignore_eos": True}
        yield PerfRequest(i, path, body, text)


def measure_level(model: OpenAICompatModel, requests: Iterator[PerfRequest], *, concurrency: int, traffic: Traffic,
                  count: int | None, duration: float | None, counter: Any,
                  progress: Callable[[int], None] | None = None, ray: tuple[Any, PerfOptions] | None = None,
                  ) -> LoadOutcome:
    """Send the requests (the first ``count``, or for ``duration`` seconds) and collect their timings.

    ``ray``: ``(model config, options)`` to spread the load over Ray workers."""
    if count is not None:
        requests = itertools.islice(requests, count)
    offsets = send_offsets(traffic, count) if count is not None else None
    if ray is not None:
        from promptweave.run.perf.ray_load import ray_load

        mcfg, opts = ray
        if count is None:
            raise PerfConfigError("--duration runs in one process; give --requests with --executor ray",
                                  field="--duration", value=duration)
        workers = opts.workers or min(8, max(1, concurrency // 64))
        return ray_load(mcfg, list(requests), concurrency=concurrency, offsets=offsets,
                        workers=min(workers, concurrency), address=opts.address)
    if offsets is None and traffic.paced and duration:
        offsets = send_offsets(traffic, max(1, int(traffic.rate * duration * 1.5) + concurrency))
    return run_sync(generate_load(model, requests, concurrency=concurrency, offsets=offsets, duration=duration,
                                  counter=counter, progress=progress))


def figures(load: LoadOutcome, max_concurrency: int) -> tuple[StageFigures, StageFigures | None, set[int]]:
    """The total stage and, when there is one, the steady-state stage of a measured level."""
    results = load.results
    ok = [r for r in results if r.ok]
    n_failed = len(results) - len(ok)
    if not ok:
        first = next((r.error for r in results), "no request was sent")
        raise PerfAllFailedError(f"every request failed; the first: {first[:300]}", field="models[]")
    duration = max(r.end for r in ok) - min(r.start for r in ok)
    total = stage_figures("total", ok, n_failed, duration, load.itl.sample(), max_concurrency)
    window = stable_window([r.start for r in ok], [r.end for r in ok], max_concurrency)
    if window is None:
        return total, None, set()
    members = [ok[i] for i in window.members]
    ids = {r.index for r in members}
    failed_in = sum(1 for r in results if not r.ok and window.start <= r.start <= window.end)
    stable = stage_figures("stable", members, failed_in, window.duration, load.itl.sample(ids), max_concurrency,
                           cap_concurrency=True)
    return total, stable, ids


def _level(model_name: str, dataset: str, model: OpenAICompatModel, requests: Iterator[PerfRequest], *,
           workdir: Path, concurrency: int, traffic: Traffic, count: int | None, duration: float | None,
           counter: Any, stem: str, progress: Callable[[int], None] | None,
           ray: tuple[Any, PerfOptions] | None = None) -> PerfLevel:
    load = measure_level(model, requests, concurrency=concurrency, traffic=traffic, count=count, duration=duration,
                         counter=counter, progress=progress, ray=ray)
    total, stable, ids = figures(load, concurrency)
    start = min(r.start for r in load.results)
    sources: dict[str, int] = {}
    for r in load.results:
        if r.ok:
            sources[f"output:{r.output_source}"] = sources.get(f"output:{r.output_source}", 0) + 1
            sources[f"input:{r.input_source}"] = sources.get(f"input:{r.input_source}", 0) + 1
    failed = [r for r in load.results if not r.ok]
    line = {"model": model_name, "dataset": dataset, "concurrency": concurrency, "stem": stem,
            "rate": traffic.rate, "total": total.raw, "stable": stable.raw if stable else None,
            "token_sources": sources}
    suffix = stem[len(dataset):]
    files = write_level(workdir, model_name, dataset, suffix, total, stable, load.results, start, ids, line)
    return PerfLevel(model_name, dataset, concurrency, total, stable, files, len(failed),
                     failed[0].error if failed else "", sources)


def _model_settings(mcfg: Any, opts: PerfOptions, level: int | None) -> tuple[int, Traffic]:
    conc = level if level is not None else (opts.concurrency or cfg_get(mcfg, "batch_size") or 1)
    if isinstance(conc, bool) or not isinstance(conc, int) or conc < 1:
        raise PerfConfigError("batch_size (the perf concurrency) must be a whole number ≥ 1",
                              field="models[].batch_size", value=conc)
    rate = opts.rate if opts.rate is not None else cfg_get(mcfg, "request_rate", 0)
    return conc, traffic_from(rate, cfg_get(mcfg, "traffic_cfg"), opts.seed)


def run_perf(cfg: Any, workdir: str | Path, *, datasets: Sequence[int] | None = None,
             models: Sequence[int] | None = None, limit: int | None = None, allow_code: bool = False,
             options: PerfOptions = PerfOptions(), levels: Sequence[int | None] = (None,),
             progress: Callable[[str, int | None], Callable[[int], None] | None] | None = None) -> list[PerfLevel]:
    """Measure every selected model × dataset (or the synthetic prompts) at each concurrency level.

    ``levels`` None: the model's ``batch_size`` (or ``options.concurrency``). ``progress(label, total)`` may
    return a callback told of each finished request.
    """
    from promptweave.compat.models import resolve_model_type
    from promptweave.run.plan import plan_config

    workdir = Path(workdir)
    model_ids = list(models) if models is not None else list(range(len(cfg.models)))
    abbrs = cfg.model_abbrs()
    for j in model_ids:  # before anything is loaded: a local model has no endpoint to measure
        if resolve_model_type(cfg.models[j]).backend != "openai":
            _stream_model(None, abbrs[j])
    out: list[PerfLevel] = []
    if options.synthetic is not None:
        n_in, n_out = options.synthetic
        for j in model_ids:
            mcfg = cfg.models[j]
            model = _stream_model(build_model(mcfg), abbrs[j])
            model.served_model()
            counter = load_token_counter(mcfg)
            params = replace(generation_params(mcfg), max_out_len=n_out)
            make = synthetic_prompts(n_in, counter, options.seed)
            for level in levels:
                conc, traffic = _model_settings(mcfg, options, level)
                count = _count(options, conc, None)
                dataset = f"synthetic-{n_in}-{n_out}"
                stem = f"{dataset}@c{conc}" if options.stem_level else dataset
                cb = progress(f"{abbrs[j]} · {stem}", count) if progress else None
                out.append(_level(abbrs[j], dataset, model, _synthetic_requests(model, make, params),
                                  workdir=workdir, concurrency=conc, traffic=traffic, count=count,
                                  duration=options.duration, counter=counter, stem=stem, progress=cb,
                                  ray=(mcfg, options) if options.executor == "ray" else None))
        return out
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tasks = plan_config(cfg, limit=limit, allow_code=allow_code, datasets=datasets, models=model_ids)
    for w in caught:  # accuracy mode ignores the pacing keys; perf mode reads them, so that warning is void here
        if not any(k in str(w.message) for k in ("request_rate", "traffic_cfg")):
            warnings.warn(w.message, stacklevel=2)
    by_name = {abbrs[j]: cfg.models[j] for j in model_ids}
    for task in tasks:
        if task.mode != "gen" or task.multiturn is not None:
            raise PerfError(f"perf mode sends one streamed generation per row; {task.dataset} uses the "
                            f"'{task.mode}' form", field="datasets[].infer_cfg.inferencer", value=task.dataset)
    counters: dict[str, Any] = {}
    for task in tasks:
        mcfg = by_name[task.model_name]
        model = _stream_model(task.make_model(), task.model_name)
        model.served_model()
        if task.model_name not in counters:
            counters[task.model_name] = load_token_counter(mcfg)
        counter = counters[task.model_name]
        rows = task.rows
        for level in levels:
            conc, traffic = _model_settings(mcfg, options, level)
            count = _count(options, conc, rows)
            stem = f"{task.dataset}@c{conc}" if options.stem_level else task.dataset
            cb = progress(f"{task.model_name} · {stem}", count) if progress else None
            reqs = _row_requests(model, task.records, task.params, cycle=options.duration is not None,
                                 row_lens=(task.settings or {}).get(ROW_OUT_LEN))
            out.append(_level(task.model_name, task.dataset, model, reqs, workdir=workdir, concurrency=conc,
                              traffic=traffic, count=count, duration=options.duration, counter=counter, stem=stem,
                              progress=cb, ray=(mcfg, options) if options.executor == "ray" else None))
    return out


def _count(opts: PerfOptions, conc: int, rows: int | None) -> int | None:
    """How many requests a level sends: ``--requests``, else 4 × concurrency in a sweep, else every row; None
    with ``--duration`` (as many as start in time)."""
    if opts.duration is not None:
        return opts.requests
    if opts.requests is not None:
        return opts.requests if rows is None else min(opts.requests, rows)
    if opts.stem_level:
        return 4 * conc if rows is None else min(4 * conc, rows)
    return rows if rows is not None else 4 * conc


__all__ = ["PerfLevel", "PerfOptions", "figures", "measure_level", "run_perf", "synthetic_prompts"]
