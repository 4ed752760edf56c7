"""The local executor: every task in this process, one model at a time (``run/execute.py``)."""
from __future__ import annotations

from promptweave.run.executors.base import RunRequest
from promptweave.work.task import TaskOutcome


class LocalExecutor:
    name = "local"

    def run(self, request: RunRequest) -> list[TaskOutcome]:
        from promptweave.run.execute import run_tasks
        from promptweave.run.plan import plan_config

        tasks = plan_config(request.config, limit=request.limit, allow_code=request.allow_code,
                            datasets=request.datasets, models=request.models)
        if request.prepare is not None:
            request.prepare(tasks)
        return run_tasks(tasks, request.workdir, show_progress=request.show_progress, console=request.console,
                         on_row_error=request.on_row_error, wait=request.wait, notify=request.notify)
