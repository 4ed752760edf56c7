"""What every executor is given and returns: a run request in, one outcome per dataset × model task out."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from promptweave.work.task import Task, TaskOutcome


@dataclass
class RunRequest:
    """A run as the CLI asks for it: the loaded config, the selected datasets and models, and where to write.

    Executors plan from this themselves: the local one builds every prompt up front,
    the Ray one builds them where each shard runs.
    """

    config: Any
    workdir: Path
    datasets: Sequence[int] | None = None
    models: Sequence[int] | None = None
    limit: int | None = None
    allow_code: bool = False
    show_progress: bool = True
    console: Any = None
    # called on the planned tasks before any model call (the CLI checks evaluators: code flag, judge model)
    prepare: Callable[[list[Task]], None] | None = None
    on_row_error: str = "wrong"  # how rows whose request failed are scored (--on-row-error)
    wait: bool = True  # wait for another run holding the work dir's lock (False: --no-wait, refuse at once)
    notify: Callable[[str], None] | None = None  # told once when waiting for that lock
    cache_path: Path | None = None  # the response cache (default: WORKDIR/cache.sqlite)


class Executor(Protocol):
    """Runs a request: writes predictions, results and summary.json into the work dir, resumably."""

    name: str

    def run(self, request: RunRequest) -> list[TaskOutcome]: ...
