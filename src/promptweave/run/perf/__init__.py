"""Serving performance mode: streamed requests against an OpenAI-protocol endpoint, timed as the bytes arrive,
with AISBench's per-request statistics (E2EL, TTFT, TPOT, ITL, tokens, throughput), run-level metrics and
steady-state stage, in its file layout; and concurrency sweeps with their page."""
from promptweave.run.perf.runner import PerfLevel, PerfOptions, run_perf
from promptweave.run.perf.sweep import parse_levels, run_sweep

__all__ = ["PerfLevel", "PerfOptions", "parse_levels", "run_perf", "run_sweep"]
