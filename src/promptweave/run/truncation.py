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


def run_owns_the_warning(model: Any) -> None:
    """The run warns once per task with the recorded count, so the model's own first-batch warning is off."""
    if hasattr(model, "warn_cuts"):
        model.warn_cuts = False


def mark_cuts(rows: Sequence[dict[str, Any]], task: Any, model: Any) -> None:
    """Add ``truncated`` to each row whose prompt the model cut (cached rows too: the cut is computed, not
    remembered)."""
    from promptweave.forms.registry import form_for

    cut_of = getattr(model, "truncation", None)
    cut = form_for(task.mode).prompt_cut
    if cut_of is None or not getattr(model, "max_seq_len", None) or not cut:
        return
    reserve = task.params.max_out_len if cut == "output" else 0
    keep = max(1, int(model.max_seq_len) - reserve)
    for row in rows:
        prompt = row.get("prompt")
        if prompt is None or row.get("prompt_tokens", keep + 1) <= keep:
            continue  # counted already (run/usage.py) and it fits: no second tokenization
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


def over_budget(tokens: int, mcfg: Any, settings: Any, mode: str) -> str | None:
    """For ``view --tokens``: when a prompt of ``tokens`` tokens exceeds the budget the run gives it, say so and
    what the run does with it; None when it fits (or no ``max_seq_len`` bounds it)."""
    from promptweave.compat.models import MODEL_TYPES, type_name
    from promptweave.errors import PromptweaveError
    from promptweave.models.factory import cfg_get, generation_params
    from promptweave.run.plan import infer_mode, prompt_budget

    try:
        run_mode = infer_mode(settings.get("type") or "GenInferencer") if isinstance(settings, dict) else mode
    except PromptweaveError:
        run_mode = mode
    run_mode = run_mode if ("gen" if run_mode == "clp" else run_mode) == mode else mode
    out_len = generation_params(mcfg, max_out_len=settings.get("max_out_len")).max_out_len
    model_max = cfg_get(mcfg, "max_seq_len")
    try:
        budget = prompt_budget(settings.get("max_seq_len"), model_max, mode=run_mode, max_out_len=out_len)
    except PromptweaveError:
        return None
    if budget is None or tokens <= budget:
        return None
    why = [f"inferencer max_seq_len {settings['max_seq_len']}"] if settings.get("max_seq_len") else []
    if model_max:
        why.append(f"model max_seq_len {model_max}" + (f" less max_out_len {out_len}" if run_mode == "gen" else ""))
    head = f"{tokens} tokens exceed the prompt budget of {budget} ({'; '.join(why)})"
    mt = MODEL_TYPES.get(type_name(cfg_get(mcfg, "type")))
    backend = mt.backend if mt else None
    if mode == "ppl":  # built to be scored (ppl, ll, ...)
        return head + ": run fails this row (a prompt to score is never cut); drop in-context examples or raise " \
                      "max_seq_len"
    if backend == "hf" and model_max:
        keep = max(1, model_max - (out_len if run_mode == "gen" else 0))
        if tokens > keep:
            return head + f": run cuts it from the left to its last {keep} tokens (recorded per row as " \
                          "'truncated')"
        return head + ": it fits the model's own limit, so run sends it whole"
    if backend == "vllm" and model_max:
        return head + ": the vLLM engine refuses a prompt longer than max_model_len, so run fails this row"
    return head + ": run sends it whole; the server decides (it may refuse or cut it)"
