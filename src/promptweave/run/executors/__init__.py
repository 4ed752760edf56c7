"""Executors: how a planned run is carried out (``local``: this process; ``ray``: row shards on a Ray cluster)."""
from __future__ import annotations

from typing import Any

from promptweave.errors import ConfigError
from promptweave.run.executors.base import Executor, RunRequest
from promptweave.run.executors.local import LocalExecutor

EXECUTORS = ("local", "ray")


def make_executor(name: str, **options: Any) -> Executor:
    """``local`` (takes no options) or ``ray`` (address, shard_rows, workers, num_cpus, num_gpus, ...)."""
    if name == "local":
        return LocalExecutor()
    if name == "ray":
        from promptweave.run.executors.ray_executor import RayExecutor

        return RayExecutor(**options)
    raise ConfigError("unknown executor", field="--executor", value=name, expected=" or ".join(EXECUTORS))


__all__ = ["EXECUTORS", "Executor", "LocalExecutor", "RunRequest", "make_executor"]
