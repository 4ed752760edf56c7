"""Conformance checker for the ``lve`` suite (kinds ``lve`` and ``lve-invalid``).

Each case goes through the public path a user gets: the test folder is written to a
temporary directory, loaded with :func:`promptweave.lve.load_test`, filled with the
instance args and run against a scripted chat model that answers ``model_replies`` in
order and records every conversation it is sent.

Custom checkers (``checker/checker.py``) in the corpus are run trusted: the corpus is
reference data shipped with the project. Checkers whose optional dependencies are
missing are skipped (verdict ``None``), like the corpus's own ``checker_status``.

Invalid cases pass iff a :class:`PromptweaveError` is raised before any model call, at
the earliest stage that can see the fault: ``load`` when the folder alone shows it (and
always when the case has no instance), else ``fill``. A fill-time rejection is accepted
only if the same test fills cleanly with other values for its parameters, i.e. the fault
really depends on the instance.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from promptweave.conformance.outcome import Outcome
from promptweave.errors import PromptweaveError
from promptweave.lve import ScriptedChatModel, execute, load_test, prepare
from promptweave.lve.model import LVETest

_SKIP_VERDICT_STAGES = ("checker_init", "check")


def _materialize(case: dict[str, Any], root: Path) -> Path:
    folder = root / "lve"
    folder.mkdir()
    if case.get("test") is None:
        (folder / "test.json").write_bytes(str(case.get("test_raw", "")).encode("utf-8"))
    else:
        (folder / "test.json").write_text(json.dumps(case["test"], ensure_ascii=False), encoding="utf-8")
    for rel, text in (case.get("files") or {}).items():
        target = (folder / rel).resolve()
        if not target.is_relative_to(folder.resolve()):
            raise ValueError(f"case file escapes the test folder: {rel}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))  # exact bytes: CRLF kept
    return folder


def check(case: dict[str, Any]) -> Outcome:
    # The corpus is checked offline: a custom checker that wants a model from the Hugging Face hub
    # fails fast instead of retrying the network (its verdict is then skipped, like the corpus's own).
    if "HF_HUB_OFFLINE" not in os.environ:
        os.environ["HF_HUB_OFFLINE"] = "1"
        constants = sys.modules.get("huggingface_hub.constants")
        if constants is not None:  # already imported: it read the variable at import time
            constants.HF_HUB_OFFLINE = True
    with tempfile.TemporaryDirectory(prefix="pw-lve-") as tmp:
        folder = _materialize(case, Path(tmp))
        if case.get("kind") == "lve-invalid":
            return _check_invalid(case, folder)
        return _check_valid(case, folder)


def _check_valid(case: dict[str, Any], folder: Path) -> Outcome:
    expected = case["expected"]
    model = ScriptedChatModel(case.get("model_replies") or [])
    args = (case.get("instance") or {}).get("args") or {}
    try:
        test = load_test(folder)
        prepared = prepare(test, args, trust_checkers=True, skip_unavailable_checker=True)
        result = execute(prepared, model)
    except PromptweaveError as exc:
        return Outcome(False, got=f"{type(exc).__name__}: {exc}", expected=expected,
                       detail=f"rejected a valid test after {len(model.sent)} model calls")
    got: dict[str, Any] = {"requests": model.sent, "response": result.response}
    want: dict[str, Any] = {"requests": expected.get("requests"), "response": expected.get("response")}
    stage = (expected.get("error") or {}).get("stage")
    if expected.get("is_safe") is not None and stage not in _SKIP_VERDICT_STAGES:
        got["is_safe"] = result.is_safe
        want["is_safe"] = expected["is_safe"]
    if got == want:
        return Outcome(True, got=got, expected=want)
    wrong = [k for k in want if got.get(k) != want[k]]
    detail = "mismatch in " + ", ".join(wrong)
    if result.checker_error:
        detail += f" (checker error: {result.checker_error})"
    return Outcome(False, got=got, expected=want, detail=detail)


def _generous_args(test: LVETest) -> list[dict[str, Any]]:
    """Argument sets that give every placeholder and parameter a plain value."""
    names = list(test.prompt_parameters or ())
    for spec in test.prompts():
        names += spec.names
    for template in test.checker.templates.values():
        names += template.names
    names = list(dict.fromkeys(names))
    return [{n: value for n in names} for value in (1, "x")]


def _check_invalid(case: dict[str, Any], folder: Path) -> Outcome:
    expected = case["expected"]
    ref_stage = (expected.get("error") or {}).get("stage")
    instance = case.get("instance")
    model = ScriptedChatModel(case.get("model_replies") or [])
    want = {"rejected": True, "stage": "load" if instance is None or ref_stage == "load" else "load or fill",
            "model_calls": 0, "reason": expected.get("reason")}
    try:
        test = load_test(folder)
    except PromptweaveError as exc:
        got = {"rejected": True, "stage": "load", "model_calls": 0, "error": str(exc)}
        return Outcome(True, got=got, expected=want)
    if instance is None or ref_stage == "load":
        return Outcome(False, got={"rejected": False, "stage": None}, expected=want,
                       detail="accepted at load, but the test folder alone shows the fault")
    args = instance.get("args") or {}
    try:
        prepared = prepare(test, args, trust_checkers=True)
    except PromptweaveError as exc:
        got = {"rejected": True, "stage": "fill", "model_calls": 0, "error": str(exc)}
        for generous in _generous_args(test):
            try:
                prepare(test, generous, trust_checkers=True)
            except PromptweaveError:
                continue
            return Outcome(True, got=got, expected=want)
        return Outcome(False, got=got, expected=want,
                       detail="rejected at fill, but the fault does not depend on the instance args: load "
                              "should have seen it")
    try:
        execute(prepared, model)
    except PromptweaveError as exc:
        got = {"rejected": True, "stage": "execute", "model_calls": len(model.sent), "error": str(exc)}
        return Outcome(False, got=got, expected=want, detail="rejected only after model calls (stage execute)")
    return Outcome(False, got={"rejected": False, "stage": None, "model_calls": len(model.sent)},
                   expected=want, detail=f"accepted: the model was called {len(model.sent)} times")
