"""The flags of the commands that run a config (``run``, ``spread``, ``lint``), each defined once.

Each :class:`Flag` is one ``typer`` option and the :class:`~promptweave.run.options.RunOptions` field it sets. A
command takes whole groups with ``@run_options(...)`` and receives one ``opts: RunOptions``; adding a flag to every
command that runs a config is one ``Flag`` in ``FLAGS`` (and its field in ``RunOptions``).

- ``select``: which datasets, models and rows (run, spread, lint);
- ``policy``: what the config may read and run (run, spread, lint);
- ``scoring``: what scoring may use, the code sandbox and the judge (run, spread, lint: lint makes run's checks);
- ``execute``: how the tasks run and where they write (run, spread; lint sends nothing);
- ``mode``: what a run measures, answers or serving performance (run).
"""
from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Optional

import typer

from promptweave.run.options import RunOptions


@dataclass(frozen=True)
class Flag:
    """One option: its parameter name, type and ``typer.Option`` settings, and the ``RunOptions`` field it sets
    (``negate``: the flag turns the field off, as ``--no-wait`` clears ``wait``)."""

    param: str
    type: Any
    default: Any
    decls: tuple[str, ...]
    help: str
    group: str
    to: str
    negate: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def option(self, **override: Any) -> Any:
        """A fresh ``typer.Option`` (commands never share one object)."""
        kw = {"help": self.help, **self.extra, **override}
        default = kw.pop("default", self.default)
        return typer.Option(default, *self.decls, **kw)


FLAGS: tuple[Flag, ...] = (
    Flag("dataset", Optional[List[str]], None, ("--dataset", "-d"), "Dataset abbr(s) (default: all).", "select",
         "datasets"),
    Flag("model", Optional[List[str]], None, ("--model", "-m"), "Model abbr(s) (default: all).", "select", "models"),
    Flag("limit", Optional[int], None, ("--limit",), "Only the first N test rows of each dataset.", "select",
         "limit", extra={"min": 1}),
    Flag("trust_config", bool, False, ("--trust-config",), "Run a .py config as Python and allow its callables "
         "(custom postprocessors) to run.", "policy", "trust_config"),
    Flag("allow_env", Optional[List[str]], None, ("--allow-env",), "Let the config read this credential-looking "
         "environment variable, or send it as a model's API key (key='ENV' / api_key_env) to the one host the config "
         "sends it to; NAME@HOST grants each host by name; repeatable.", "policy", "allow_env"),
    Flag("allow_data", Optional[List[str]], None, ("--allow-data",), "Let a safe-mode config read data at this path "
         "(file or folder) outside the data roots; repeatable.", "policy", "allow_data"),
    Flag("workdir", Path, Path("outputs"), ("-w", "--work-dir"), "Where predictions, results and the response "
         "cache go; rerun the same command to resume.", "execute", "workdir"),
    Flag("dry_run", bool, False, ("--dry-run",), "Plan and show the tasks; load no model, send nothing.", "execute",
         "dry_run"),
    Flag("no_progress", bool, False, ("--no-progress",), "No progress bars.", "execute", "show_progress",
         negate=True),
    Flag("on_row_error", str, "wrong", ("--on-row-error",), "A row whose request still fails after its retries: "
         "'wrong' (default: scored as incorrect, counted in the results), 'skip' (left out of the metrics, "
         "counted), 'fail' (the task fails). Its error is in the predictions either way; a rerun retries only such "
         "rows.", "execute", "on_row_error"),
    Flag("no_wait", bool, False, ("--no-wait",), "If another run is writing to the work dir, stop at once (exit 4) "
         "instead of waiting for it.", "execute", "wait", negate=True),
    Flag("no_report", bool, False, ("--no-report",), "Do not write the HTML report (WORKDIR/report.html) at the "
         "end.", "execute", "report", negate=True),
    Flag("allow_code_exec", bool, False, ("--allow-code-exec",), "Let code evaluators (HumanEval, MBPP) and the "
         "CIBench agent run the model's code, in the OS sandbox.", "scoring", "allow_code_exec"),
    Flag("code_sandbox", str, "bwrap", ("--code-sandbox",), "Where --allow-code-exec runs model code: 'bwrap' "
         "(default: bubblewrap; no network, own PID namespace, clean env, private tmpfs) or 'rlimits' (WEAKER: only "
         "time/memory limits, no isolation).", "scoring", "code_sandbox"),
    Flag("judge_model", Optional[str], None, ("--judge-model",), "Judge for LLM-judged datasets whose judge_cfg is "
         "empty: a model abbr from judge_models or models.", "scoring", "judge_model"),
    Flag("executor", str, "local", ("--executor",), "local (this process) or ray (row shards on a Ray cluster; "
         "needs promptweave[ray]).", "execute", "executor"),
    Flag("address", Optional[str], None, ("--address",), "Ray: join this running cluster (default: start a local "
         "Ray instance on loopback).", "execute", "address"),
    Flag("shard_rows", Optional[int], None, ("--shard-rows",), "Ray: rows per shard (default: from the model's "
         "batch size and the number of workers).", "execute", "shard_rows", extra={"min": 1}),
    Flag("workers", Optional[int], None, ("--workers",), "Ray: model replicas (actors) per model (default: one per "
         "num_gpus GPUs of the cluster, else 1).", "execute", "workers", extra={"min": 1}),
    Flag("num_gpus", Optional[float], None, ("--num-gpus",), "Ray: GPUs per replica (default: the model's "
         "run_cfg.num_gpus).", "execute", "num_gpus", extra={"min": 0}),
    Flag("num_cpus", Optional[float], None, ("--num-cpus",), "Ray: CPUs per replica (default: the model's "
         "run_cfg.num_cpus, else 1; 0 for API models).", "execute", "num_cpus", extra={"min": 0}),
    Flag("mode", str, "accuracy", ("--mode",), "accuracy (default: answers and scores) or perf (serving "
         "performance: streamed requests at the model's batch_size and request_rate, AISBench's performances/ "
         "files; see also `promptweave perf`).", "mode", "mode"),
)
GROUPS = ("select", "policy", "scoring", "execute", "mode")


def flags(*groups: str) -> list[Flag]:
    return [f for f in FLAGS if f.group in groups]


def flag(param: str) -> Flag:
    """One flag by its parameter name, for a command that takes it without its whole group (``view``)."""
    return next(f for f in FLAGS if f.param == param)


def run_options(*groups: str, **override: dict[str, Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command the flags of ``groups`` (after its own parameters) and call it with ``opts: RunOptions`` built
    from them. ``override`` changes a flag's ``typer.Option`` settings for this command (``workdir={"default":
    ...}``), never its name or meaning."""
    chosen = flags(*groups)
    unknown = set(override) - {f.param for f in chosen}
    if unknown or not set(groups) <= set(GROUPS):
        raise ValueError(f"unknown flag group or flag: {sorted(set(groups) - set(GROUPS)) + sorted(unknown)}")

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(fn)
        own = [p.replace(annotation=hints.get(p.name, p.annotation))
               for p in inspect.signature(fn).parameters.values() if p.name != "opts"]
        added = [inspect.Parameter(f.param, inspect.Parameter.KEYWORD_ONLY, annotation=f.type,
                                   default=f.option(**override.get(f.param, {}))) for f in chosen]

        @functools.wraps(fn)
        def command(**kw: Any) -> Any:
            values: dict[str, Any] = {}
            for f in chosen:
                got = kw.pop(f.param)
                values[f.to] = (not got) if f.negate else got
            return fn(opts=RunOptions(**values), **kw)

        command.__signature__ = inspect.Signature(own + added)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in own + added}
        return command

    return wrap


__all__ = ["FLAGS", "Flag", "GROUPS", "flag", "flags", "run_options"]
