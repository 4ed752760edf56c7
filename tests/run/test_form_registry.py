"""One table of inference forms: every inferencer the compat vocabulary maps resolves to a registered form module
with one protocol, and the runner reaches forms only through the registry."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from promptweave.compat.inferencers import AGENT_TURNS, CHAT_TURNS, INFERENCERS
from promptweave.errors import PromptweaveError
from promptweave.forms.base import Form
from promptweave.forms.registry import FORMS, form_for

SRC = Path(__file__).resolve().parents[2] / "src" / "promptweave"
NAMES = ("tot", "attack", "agent", "chat", "multiturn", "sc", "ll", "ppl_only", "function_call", "inference_ppl",
         "sw_ce_loss")


def test_every_inferencer_runs_as_a_registered_form() -> None:
    modes = {f.mode for f in INFERENCERS.values()} | {CHAT_TURNS.mode, AGENT_TURNS.mode}
    assert modes == set(FORMS)
    for mode in modes:
        form = form_for(mode)
        assert isinstance(form, Form) and form.name == mode
        assert form.build_mode in ("gen", "ppl") and form.eval_mode in ("gen", "ppl")


def test_the_forms_flags_say_what_the_runner_used_to_switch_on() -> None:
    assert {m for m in FORMS if form_for(m).scoring} == {"ppl", "ll", "ppl_only", "clp", "inference_ppl",
                                                        "sw_ce_loss"}
    assert {m for m in FORMS if form_for(m).build_mode == "ppl"} == {"ppl", "ll", "ppl_only", "inference_ppl",
                                                                    "sw_ce_loss"}
    assert {m for m in FORMS if form_for(m).eval_mode == "gen"} == {"gen", "sc", "function_call", "chat", "agent",
                                                                   "multiturn", "tot", "attack"}
    assert [m for m in FORMS if not form_for(m).shared_index] == ["multiturn"]
    assert form_for("function_call").stand_ins == ("api",)


def test_an_unknown_form_is_a_typed_error() -> None:
    with pytest.raises(PromptweaveError, match="unknown inference form"):
        form_for("telepathy")


def test_the_runner_and_the_commands_name_no_form() -> None:
    pat = re.compile(r"[\"'](" + "|".join(NAMES) + r")[\"']")
    hits = [f"{p.relative_to(SRC)}:{n}" for room in ("run", "cli") for p in sorted((SRC / room).rglob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if pat.search(line) and not line.lstrip().startswith("#")]
    assert hits == []
