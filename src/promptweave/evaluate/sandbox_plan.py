"""Plan time for ``--allow-code-exec``: the tasks that run model code get the chosen sandbox, which must work here.

Refused before any model call (a typed error saying how to get bubblewrap), so ``run --dry-run`` and the run give
the same verdict; the weaker ``rlimits`` mode is warned about once per run, naming what it leaves open.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from promptweave.evaluate import os_sandbox


def runs_code(task: Any) -> bool:
    """An agent task (its Python session) or a task whose evaluator runs the answers."""
    if getattr(task, "mode", None) == "agent" and task.refused is None:
        return True
    ev = getattr(task, "evaluation", None)
    return ev is not None and "code" in ev.needs


def apply_code_sandbox(tasks: Sequence[Any], mode: str) -> None:
    os_sandbox.check_mode(mode)
    coding = [t for t in tasks if runs_code(t)]
    if not coding:
        return
    os_sandbox.require(mode)
    for t in coding:
        ev = getattr(t, "evaluation", None)
        if ev is not None:
            ev.code_sandbox = mode
        inf = getattr(t, "multiturn", None)
        settings = getattr(inf, "settings", None)
        if getattr(t, "mode", None) == "agent" and settings is not None and hasattr(settings, "sandbox"):
            inf.settings = replace(settings, sandbox=mode)
