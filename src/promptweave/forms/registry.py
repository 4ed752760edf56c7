"""The inference forms by name: one line per form, each form's module imported on first use.

``compat/inferencers.py`` maps the references' inferencer names (and their settings) to a form name; this table maps
the form name to the module that holds its :class:`~promptweave.forms.base.Form` (as ``FORM``). Everything else in
the runner reaches forms through :func:`form_for` and the helpers below.
"""
from __future__ import annotations

import importlib
from typing import Any

from promptweave.errors import PromptweaveError

FORMS: dict[str, str] = {
    "gen": "promptweave.forms.gen",  # one generation per row
    "ppl": "promptweave.forms.ppl",  # perplexity of each label's prompt, lowest wins
    "clp": "promptweave.forms.clp",  # next-token probability of each choice
    "sc": "promptweave.forms.sc",  # self-consistency: sampled generations, majority vote
    "ll": "promptweave.forms.ll",  # log-likelihood of the row's continuation after each label's prompt
    "ppl_only": "promptweave.forms.ppl_only",  # the prompt's perplexity is the prediction
    "function_call": "promptweave.forms.function_call",  # the row's functions sent as tools
    "inference_ppl": "promptweave.forms.corpus",  # loss of the labelled character spans (local model)
    "sw_ce_loss": "promptweave.forms.corpus",  # sliding-window cross-entropy of the corpus (local model)
    "multiturn": "promptweave.forms.multiturn",  # a conversation, one reply per BOT turn, scored per turn
    "chat": "promptweave.forms.chat",  # ChatInferencer every / every_with_gt: a row's chat, scored per row
    "agent": "promptweave.forms.agent",  # AgentInferencer every / every_with_gt: a ReAct code agent per chat
    "tot": "promptweave.forms.tot",  # tree-of-thought search per row
    "attack": "promptweave.forms.attack",  # PromptBench prompt selection over a list of prompts
}

_loaded: dict[str, Any] = {}


def form_for(name: str) -> Any:
    """The :class:`~promptweave.forms.base.Form` named ``name`` (its module imported on first use)."""
    form = _loaded.get(name)
    if form is None:
        module = FORMS.get(name)
        if module is None:
            raise PromptweaveError("unknown inference form", field="mode", value=name,
                                   expected=", ".join(FORMS))
        got = importlib.import_module(module).FORM
        form = got[name] if isinstance(got, dict) else got  # a module may hold several forms by name
        _loaded[name] = form
    return form


def form_of_dataset(spec: Any, *, strict: bool = True) -> Any | None:
    """The form a dataset's inferencer runs as; an inferencer we do not run is its typed error, or None when not
    ``strict``."""
    from promptweave.compat.inferencers import inferencer_name, resolve_inferencer

    try:
        resolved, _ = resolve_inferencer(inferencer_name(spec.inferencer.type), spec.inferencer.settings)
    except PromptweaveError:
        if strict:
            raise
        return None
    return form_for(resolved.mode)


def view_turns(spec: Any, model: Any) -> Any:
    """The turn-by-turn prompts ``view`` shows for a dataset whose form runs a conversation per row, or None."""
    form = form_of_dataset(spec)
    return None if form is None else form.view_turns(spec, model)


def view_dataset(spec: Any) -> tuple[Any, str | None]:
    """The dataset as ``view`` shows it, and a note to print (e.g. which of several prompts it shows)."""
    form = form_of_dataset(spec, strict=False)
    return (spec, None) if form is None else form.view_dataset(spec)
