"""What ``lint``, ``run --dry-run``, ``run`` and ``view`` conclude about a dataset × model before any model call.

Every check that needs no model call lives here once and is reached from planning (``run.plan``), which all of
``lint``, ``run --dry-run`` and ``run`` go through, so the three give the same verdict on the same config:

- a pair the model cannot serve (perplexity scoring on a chat API; a corpus-loss form on a remote model; a
  chat-template model whose local tokenizer has no ``chat_template``) becomes a *refused* task: the plan keeps
  it, ``--dry-run`` lists it as ``will fail`` and exits :attr:`~promptweave.cli.common.ExitCode.WILL_FAIL`,
  ``lint`` reports it, and ``run`` fails that task with the same line while the others run;
- an unknown model type stops the plan (``[PW160]``, with a "did you mean" for a near miss).

``view`` calls :func:`view_pairs` on the models it shows: it warns, with the line ``lint`` and ``run`` give, about
an unknown model type and a model whose tasks ``run`` would refuse (view only renders prompts, which needs
neither).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from promptweave.errors import ModelError, PromptweaveError


def chat_template_problem(mcfg: Any, *, file: str | None, where: str) -> ModelError | None:
    """A local chat-template model (``HuggingFacewithChatTemplate``, ``VLLMwithChatTemplate``...) sends chat
    messages through its tokenizer's ``chat_template``: a local tokenizer folder without one fails every request
    (as the run's backend would say), so it is found here. A tokenizer that is not a local folder is not read."""
    from promptweave.compat.models import MODEL_TYPES, type_name
    from promptweave.models.factory import cfg_get
    from promptweave.render.chat_template import load_chat_template

    mt = MODEL_TYPES.get(type_name(cfg_get(mcfg, "type")))
    if mt is None or mt.backend not in ("hf", "vllm") or (cfg_get(mcfg, "kind") or mt.kind) != "api":
        return None
    key = "tokenizer_path" if cfg_get(mcfg, "tokenizer_path") else "path"
    path = cfg_get(mcfg, key)
    if not path or not Path(str(path)).expanduser().is_dir():
        return None
    try:
        found = load_chat_template(str(path))
    except PromptweaveError:
        found = None
    if found is not None:
        return None
    return ModelError("this tokenizer has no chat_template, so it cannot take message lists", file=file,
                      field=f"{where}.{key}", value=str(path),
                      expected="a tokenizer folder whose tokenizer_config.json (or chat_template.jinja) holds a "
                               "chat_template, or type='HuggingFaceCausalLM' with a meta_template")


def check_chat_template(build_mode: str, mcfg: Any, *, file: str | None, where: str,
                        seen: dict[int, Any] | None = None) -> None:
    """Raise :func:`chat_template_problem`'s error for a pair whose prompts are built for generation (``build_mode``
    ``gen``: chat messages, for a chat-template model); planning catches it and plans the pair as refused. ``seen``
    caches the per-model check across a plan's datasets."""
    if build_mode != "gen":
        return
    key = id(mcfg)
    if seen is None or key not in seen:
        problem = chat_template_problem(mcfg, file=file, where=where)
        if seen is None:
            if problem is not None:
                raise problem
            return
        seen[key] = problem
    if seen[key] is not None:
        raise seen[key]


def refused(tasks: Sequence[Any]) -> list[tuple[Any, PromptweaveError]]:
    """The planned tasks that will fail, each with its error (``run --dry-run`` lists them; ``lint`` reports them)."""
    return [(t, t.refused) for t in tasks if t.refused is not None]


def view_pairs(cfg: Any, model_ids: Sequence[int], *, explicit: bool) -> Any:
    """For ``view``: warn, with the line ``lint`` and ``run`` give, about each shown model they would refuse (an
    unknown type stops both; a tokenizer without a chat template fails its tasks); return ``shows(i, k)``: whether
    dataset ``i`` × the ``k``-th shown model is a pair the run plans (``model_dataset_combinations``), every pair
    when both ``-d`` and ``-m`` were given."""
    import warnings

    from promptweave.compat.models import resolve_model_type
    from promptweave.config.pairs import allowed_pairs
    from promptweave.errors import PromptweaveWarning

    file = str(cfg.path)
    for j in model_ids:
        mcfg = cfg.models[j]
        try:
            resolve_model_type(mcfg, file=file, field=f"models[{j}].type")
        except PromptweaveError as exc:
            warnings.warn(f"{exc} (lint and run stop on this; view shows the prompts as text)", PromptweaveWarning,
                          stacklevel=2)
            continue
        problem = chat_template_problem(mcfg, file=file, where=f"models[{j}]")
        if problem is not None:
            warnings.warn(f"{problem} (run fails this model's generation tasks; lint reports it)",
                          PromptweaveWarning, stacklevel=2)
    allowed = None if explicit else allowed_pairs(cfg)
    ids = list(model_ids)
    return lambda i, k: allowed is None or (i, ids[k]) in allowed
