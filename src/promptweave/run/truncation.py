"""Prompts the model cut to fit ``max_seq_len``, recorded as data.

A local model (transformers) keeps the last ``max_seq_len - max_out_len`` tokens of a longer prompt (the question
sits at the end), as OpenCompass's models do. The run records, per prediction row, whether and how the prompt was
cut (``truncated``: side, tokens before and after, where the kept part starts), computed from the prompt and the
model's tokenizer, so a fully cached rerun records the same; the results count the cut rows on every run
(``truncated_prompts``), and one warning per task says how many and why.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from promptweave.errors import PromptweaveWarning

_RESERVE = {"gen": "max_out_len", "clp": None}  # the forms the model cuts (scored prompts are never cut)


def run_owns_the_warning(model: Any) -> None:
    """The run warns once per task with the recorded count, so the model's own first-batch warning is off."""
    if hasattr(model, "warn_cuts"):
        model.warn_cuts = False


def mark_cuts(rows: Sequence[dict[str, Any]], task: Any, model: Any) -> None:
    """Add ``truncated`` to each row whose prompt the model cut (cached rows too: the cut is computed, not
    remembered)."""
    cut_of = getattr(model, "truncation", None)
    if cut_of is None or not getattr(model, "max_seq_len", None) or task.mode not in _RESERVE:
        return
    reserve = task.params.max_out_len if task.mode == "gen" else 0
    for row in rows:
        prompt = row.get("prompt")
        if prompt is None:
            continue
        info = cut_of(prompt, reserve)
        if info is not None:
            row["truncated"] = info


def cut_warning(task: Any, count: int, rows: int, example: dict[str, Any] | None) -> None:
    """The one warning about cut prompts, per task."""
    if not count:
        return
    budget = ""
    if example:
        budget = (f" longer than {example['tokens_after']} tokens (max_seq_len {example['max_seq_len']}"
                  + (f" less max_out_len {example['reserved']}" if example.get("reserved") else "") + ")")
    warnings.warn(f"{task.model_name} · {task.dataset}: {count} of {rows} prompt(s){budget} were cut from the left "
                  "to fit (each row's 'truncated' in the predictions says how; the report shows what was sent); set "
                  "max_seq_len on the inferencer or model config with the model's tokenizer_path so in-context "
                  "examples are dropped instead", PromptweaveWarning, stacklevel=4)
