"""Helpers shared by CLI commands, and the one table of exit codes every command uses."""
from __future__ import annotations

from enum import IntEnum
from typing import Any, NoReturn

import typer

from promptweave.config.select import select  # noqa: F401 - the commands take it from here
from promptweave.errors import PromptweaveError, WorkdirLockedError


class ExitCode(IntEnum):
    """What a ``promptweave`` command's exit status means, the same for every command."""

    OK = 0
    """Finished; everything passed."""
    FAILURES = 1
    """Finished, and found problems: conformance or LVE mismatches, a task that failed."""
    BAD_INPUT = 2
    """A usage, config, template, data or model-setting error (the one-line ``error:`` says which); ``lint``
    reports every such finding and exits with this too."""
    FAILED_ROWS = 3
    """``run`` finished every task, but some rows failed (scored per ``--on-row-error``); rerun to retry them."""
    LOCKED = 4
    """``run --no-wait``: another run holds the work dir."""
    INTERNAL = 5
    """A bug in promptweave (``[PW001] internal error``); rerun with ``--debug`` for the traceback and report it."""
    WILL_FAIL = 6
    """``run --dry-run``: the plan holds tasks that will fail (each listed as ``will fail:``, the same finding
    ``lint`` reports); the other tasks would run."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C (SIGINT); finished calls are cached, so rerunning resumes."""


EXIT_CODES = ExitCode


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit status for an error that stopped a command."""
    if isinstance(exc, WorkdirLockedError):
        return ExitCode.LOCKED
    if isinstance(exc, PromptweaveError):
        return ExitCode.BAD_INPUT
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    return ExitCode.INTERNAL


def fail(console: Any, exc: PromptweaveError) -> NoReturn:
    console.print(f"error: {exc}", style="bold red", markup=False, soft_wrap=True)  # one line, never wrapped
    raise typer.Exit(exit_code_for(exc))




def print_warnings(console: Any, messages: Any) -> None:
    """Each warning once, as ``lint`` and ``view`` print them."""
    for msg in dict.fromkeys(messages):
        console.print(f"warning: {msg}", style="yellow", markup=False, soft_wrap=True)
