"""``perf --concurrency 1,16,256``: one measured level per concurrency, files named ``<dataset>@c<N>``, then the
sweep's page (``perf.html`` in the work dir)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from promptweave.errors import PerfConfigError
from promptweave.run.perf.runner import PerfLevel, PerfOptions, run_perf

MAX_LEVEL = 100_000


def parse_levels(text: str) -> list[int]:
    """``"1,16,256"`` → ``[1, 16, 256]`` (each a whole number from 1 to 100000, no repeats)."""
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part.isdigit() or not 1 <= int(part) <= MAX_LEVEL:
            raise PerfConfigError(f"each level must be a whole number from 1 to {MAX_LEVEL}",
                                  field="--concurrency", value=text[:80])
        if int(part) not in out:
            out.append(int(part))
    return out


def parse_synthetic(text: str) -> tuple[int, int]:
    """``"IN,OUT"`` → input and output tokens per synthetic request."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2 or not all(p.isdigit() and 1 <= int(p) <= 1_000_000 for p in parts):
        raise PerfConfigError("expected IN,OUT: input and output tokens per request, whole numbers ≥ 1",
                              field="--synthetic", value=text[:80])
    return int(parts[0]), int(parts[1])


def run_sweep(cfg: Any, workdir: str | Path, levels: Sequence[int], *, options: PerfOptions = PerfOptions(),
              datasets: Sequence[int] | None = None, models: Sequence[int] | None = None,
              limit: int | None = None, allow_code: bool = False,
              progress: Callable[[str, int | None], Callable[[int], None] | None] | None = None,
              ) -> tuple[list[PerfLevel], Path]:
    """Measure each level in order (lowest first) and write the sweep page; returns the levels and its path."""
    from promptweave.report.perf_page import write_perf_page

    got = run_perf(cfg, workdir, datasets=datasets, models=models, limit=limit, allow_code=allow_code,
                   options=replace(options, stem_level=True), levels=sorted(levels), progress=progress)
    return got, write_perf_page(Path(workdir))
