"""Per-request statistics and run-level metrics of a stage, with the units and rounding AISBench writes.

Per-request rows (CSV): Average, Min, Max, Median, P75, P90, P99 (linear interpolation between order statistics)
and N. Latencies are kept in seconds, rounded to 4 places, then written in ms (so to 0.1 ms); token counts bare;
throughput in ``token/s``. ITL pools every gap of every request. TPOT and ITL count (N) the requests with at least one
non-zero gap; ITL is left out when no request has a gap, TTFT and TPOT when they are all zero.
Run-level metrics (JSON) are ``{"name": {"<stage>": value}}``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from promptweave.run.perf.itl_store import LogHistogram
from promptweave.run.perf.measure import RequestResult

STATS = ("Average", "Min", "Max", "Median", "P75", "P90", "P99")
CSV_HEADER = ["Performance Parameters", "Stage", *STATS, "N"]
ROWS = ("E2EL", "TTFT", "TPOT", "ITL", "InputTokens", "OutputTokens", "OutputTokenThroughput")
COMMON = ("Benchmark Duration", "Total Requests", "Failed Requests", "Success Requests", "Concurrency",
          "Max Concurrency", "Request Throughput", "Total Input Tokens", "Prefill Token Throughput",
          "Total Generated Tokens", "Input Token Throughput", "Output Token Throughput", "Total Token Throughput")
_MS = {"E2EL", "TTFT", "TPOT", "ITL"}
_UNITS = {"Benchmark Duration": " ms", "Request Throughput": " req/s", "Prefill Token Throughput": " token/s",
          "Input Token Throughput": " token/s", "Output Token Throughput": " token/s",
          "Total Token Throughput": " token/s"}


def summary(values: np.ndarray | LogHistogram) -> dict[str, float]:
    """The seven statistics of ``values`` (each rounded to 4 places); zeros when empty."""
    if isinstance(values, LogHistogram):
        if not values.n:
            return {k: 0 for k in STATS}
        got = {"Average": values.total / values.n, "Min": values.lo, "Max": values.hi,
               "Median": values.quantile(0.5), "P75": values.quantile(0.75), "P90": values.quantile(0.9),
               "P99": values.quantile(0.99)}
        return {k: round(float(v), 4) for k, v in got.items()}
    if values.size == 0:
        return {k: 0 for k in STATS}
    p = np.percentile(values, [50, 75, 90, 99])
    got = {"Average": values.mean(), "Min": values.min(), "Max": values.max(), "Median": p[0], "P75": p[1],
           "P90": p[2], "P99": p[3]}
    return {k: round(float(v), 4) for k, v in got.items()}


@dataclass
class StageFigures:
    """One stage's per-request statistics (CSV rows) and run-level metrics (JSON), with units."""

    name: str
    rows: dict[str, dict[str, Any]]
    common: dict[str, Any]
    raw: dict[str, Any]  # unformatted numbers for pages and checks: seconds, counts, rates


def stage_figures(name: str, results: Sequence[RequestResult], failed: int, duration: float, itl: Any,
                  max_concurrency: int, *, cap_concurrency: bool = False) -> StageFigures:
    """The figures of the successful ``results`` of a stage that also had ``failed`` failed requests."""
    ok = [r for r in results if r.ok]
    col = {
        "E2EL": np.array([r.e2el for r in ok], dtype=np.float64),
        "TTFT": np.array([r.ttft for r in ok], dtype=np.float64),
        "TPOT": np.array([r.tpot for r in ok], dtype=np.float64),
        "InputTokens": np.array([r.input_tokens for r in ok], dtype=np.float64),
        "OutputTokens": np.array([r.output_tokens for r in ok], dtype=np.float64),
        "OutputTokenThroughput": np.array([r.throughput for r in ok], dtype=np.float64),
    }
    decoding = sum(1 for r in ok if r.decoded)
    rows: dict[str, dict[str, Any]] = {}
    for metric in ROWS:
        if metric == "ITL":
            n_itl = itl.n if isinstance(itl, LogHistogram) else int(np.asarray(itl).size)
            if n_itl == 0:
                continue
            stats = summary(itl)
        else:
            values = col[metric]
            if metric in ("TTFT", "TPOT") and values.size and float(values.sum()) == 0.0:
                continue
            stats = summary(values)
        shown: dict[str, Any] = {}
        for k, v in stats.items():
            if metric in _MS:
                shown[k] = f"{round(v * 1000, 4)} ms"
            elif metric == "OutputTokenThroughput":
                shown[k] = f"{v} token/s"
            else:
                shown[k] = v
        shown["N"] = decoding if metric in ("TPOT", "ITL") else len(ok)
        rows[metric] = shown
    total_in = int(col["InputTokens"].sum())
    total_out = int(col["OutputTokens"].sum())
    sum_e2el = float(col["E2EL"].sum())
    sum_ttft = float(col["TTFT"].sum())
    raw: dict[str, Any] = {
        "Benchmark Duration": round(duration * 1000, 4),
        "Total Requests": len(ok) + failed,
        "Failed Requests": failed,
        "Success Requests": len(ok),
        "Concurrency": round(sum_e2el / duration, 4) if duration > 0 else 0,
        "Max Concurrency": max_concurrency,
        "Request Throughput": round(len(ok) / duration, 4) if duration > 0 else 0,
        "Total Input Tokens": total_in,
        "Prefill Token Throughput": round(total_in / sum_ttft, 4) if total_in and sum_ttft > 0 else None,
        "Total Generated Tokens": total_out,
    }
    if cap_concurrency:
        raw["Concurrency"] = min(raw["Concurrency"], max_concurrency)
    if duration > 0:
        raw["Input Token Throughput"] = round(total_in / duration, 4)
        raw["Output Token Throughput"] = round(total_out / duration, 4)
        raw["Total Token Throughput"] = round((total_in + total_out) / duration, 4)
    common = {k: f"{raw[k]}{_UNITS[k]}" if k in _UNITS else raw[k] for k in COMMON
              if raw.get(k) is not None}
    medians = {m: float(np.median(col[m])) if col[m].size else 0.0 for m in col}
    return StageFigures(name, rows, common, {**raw, "medians": medians, "stats": {
        m: summary(col[m]) for m in col} | {"ITL": summary(itl)}})
