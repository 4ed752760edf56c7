"""Inferencer ``type=`` names of OpenCompass / AISBench dataset configs → promptweave inference forms.

A form is how a dataset's prompts are used: ``gen`` (one generation), ``ppl`` (score each label's prompt, lowest
perplexity wins), ``clp`` (next-token probability of each choice), ``multiturn`` (a conversation, one reply per
BOT turn), ``sc`` (self-consistency: ``sc_size`` sampled generations, majority vote over the postprocessed
answers), ``ll`` (log-likelihood of the row's ``cont`` continuation after each label's prompt, highest wins) and
``ppl_only`` (the perplexity of each prompt is the prediction), ``chat`` (ChatInferencer's ``every`` /
``every_with_gt``: a reply for every assistant message of the row's chat, one prediction list per row), ``agent``
(AgentInferencer's ``every`` / ``every_with_gt``: a ReAct code agent answers each user message, its code run in a
sandboxed Python session), ``function_call`` (the row's functions are sent
as tools; the returned calls are the prediction), ``tot`` (a tree-of-thought search per row, infer/tot.py) and
``attack`` (PromptBench prompt selection: the dataset scored under each prompt of a list, infer/attack.py). ``inference_ppl`` (the summed loss and count of the tokens inside
each row's labelled character spans) and ``sw_ce_loss`` (cross-entropy of the whole corpus through a sliding token
window) run on local transformers models only (``infer/inference_ppl.py``, ``infer/sw_ce_loss.py``). Every inferencer keyword is either honoured or
named as ignored; a name that is neither implemented nor known is a typed error, never quietly generation.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from promptweave.errors import UnsupportedError

# Keywords every reference inferencer accepts that have no effect on prompts or answers here.
_COMMON_IGNORED = {
    "batch_size": "the model config's batch_size (local) or concurrency (HTTP) sets batching",
    "save_every": "every answer is stored in the response cache as it arrives",
    "output_json_filepath": "predictions go to the work dir",
    "output_json_filename": "predictions go to the work dir",
    "fix_id_list": "set the retriever's fix_id_list",
    "dump_timer": "",
    "dump_res_length": "",
}


@dataclass(frozen=True)
class InferencerForm:
    """One reference inferencer as promptweave runs it."""

    name: str
    mode: str
    honoured: frozenset[str] = frozenset()
    ignored: Mapping[str, str] = field(default_factory=dict)
    note: str = ""  # said in the plan whenever the form is used (how it differs from the reference)


_GEN = frozenset({"max_out_len", "max_seq_len", "stopping_criteria", "gen_field_replace_token",
                  "generation_kwargs"})
_PPL = frozenset({"max_seq_len", "labels", "normalizing_str"})

INFERENCERS: dict[str, InferencerForm] = {
    "GenInferencer": InferencerForm("GenInferencer", "gen", _GEN, {"min_out_len": "not enforced"}),
    "ParallelGenInferencer": InferencerForm("ParallelGenInferencer", "gen", _GEN,
                                            {"min_out_len": "not enforced"}),
    "GLMChoiceInferencer": InferencerForm("GLMChoiceInferencer", "gen", _GEN | {"choices"}),
    "LMMGenInferencer": InferencerForm("LMMGenInferencer", "gen", _GEN),
    "ChatInferencer": InferencerForm(
        "ChatInferencer", "gen", _GEN | {"infer_mode"}, {"temperature": "set generation_kwargs on the model",
                                                         "do_sample": "set generation_kwargs on the model"},
        ""),
    "AgentInferencer": InferencerForm(
        "AgentInferencer", "gen", _GEN | {"infer_mode"},
        {"example": "the examples are the ones in the prompt template"},
        "AgentInferencer runs tool-free: the dialogue up to its last assistant turn is sent to the model as is and "
        "its reply is the prediction; tool calls it writes are not executed (the reference needs a Lagent agent "
        "model for that)"),
    "ParallelChatInferencer": InferencerForm("ParallelChatInferencer", "gen", _GEN | {"infer_mode"}),
    "PPLInferencer": InferencerForm("PPLInferencer", "ppl", _PPL),
    "CLPInferencer": InferencerForm("CLPInferencer", "clp", frozenset({"max_seq_len", "choices"}),
                                    {"single_token": "choices are always scored as single tokens"}),
    "MultiTurnGenInferencer": InferencerForm("MultiTurnGenInferencer", "multiturn", _GEN | {"infer_mode"}),
    "SCInferencer": InferencerForm("SCInferencer", "sc", _GEN | {"sc_size"},
                                   {"infer_type": "self-consistency is the only kind"}),
    "LLInferencer": InferencerForm("LLInferencer", "ll", _PPL),
    "PPLOnlyInferencer": InferencerForm("PPLOnlyInferencer", "ppl_only", frozenset({"max_seq_len"})),
    # function calling (infer/function_call.py): the row's functions go to an API model as tools
    "BFCLV3FunctionCallInferencer": InferencerForm(
        "BFCLV3FunctionCallInferencer", "function_call", _GEN | {"mode"},
        note="BFCLV3FunctionCallInferencer runs as function calling: each row's first turn goes to the API model "
             "with its functions as the request's tools, and the returned tool_calls are the prediction (the "
             "reference's returns_tool_calls=True path; its prompt-based path is not used)"),
    # corpus-loss forms on a local transformers model (infer/inference_ppl.py, infer/sw_ce_loss.py)
    "InferencePPLOnlyInferencer": InferencerForm(
        "InferencePPLOnlyInferencer", "inference_ppl", frozenset({"max_seq_len"})),
    "SWCELossInferencer": InferencerForm(
        "SWCELossInferencer", "sw_ce_loss", frozenset({"block_size", "stride"}),
        {"max_seq_len": "the window is block_size tokens, as in the reference"}),
    # search (infer/tot.py, infer/attack.py): the model in a search loop
    "ToTInferencer": InferencerForm(
        "ToTInferencer", "tot",
        _GEN | {"prompt_wrapper", "prompt_sample", "method_generate", "method_evaluate", "method_select",
                "n_generate_sample", "n_evaluate_sample", "n_select_sample"},
        {"naive_run": "the reference stores it but never reads it"},
        "ToTInferencer runs a breadth-first tree-of-thought search per row (the prompt wrapper's propose/value "
        "prompts, each call cached); an HTTP model answers each prompt once, as in the reference; the kept "
        "candidates are the row's output and the best of them is scored"),
    "AttackInferencer": InferencerForm(
        "AttackInferencer", "attack",
        frozenset({"max_out_len", "max_seq_len", "original_prompt_list", "adv_key", "metric_key",
                   "gen_field_replace_token", "dataset_cfg"}),
        {"generation_kwargs": "the reference's AttackInferencer does not pass them to the model"},
        "AttackInferencer runs PromptBench's prompt selection: each prompt of original_prompt_list fills the "
        "template's adv_key placeholder and is scored on the whole dataset with its eval_cfg; the prompts are "
        "ranked by that score (results: prompt_selection; attack/<model>/<dataset>_attacklog.txt)"),
}

# ChatInferencer / ParallelChatInferencer with infer_mode 'every' or 'every_with_gt'
CHAT_TURNS = InferencerForm(
    "ChatInferencer", "chat", _GEN | {"infer_mode"},
    {"temperature": "set generation_kwargs on the model", "do_sample": "set generation_kwargs on the model"})

# agent helper: AgentInferencer with infer_mode 'every' or 'every_with_gt' (forms/agent_loop.py, forms/agent.py)
AGENT_TURNS = InferencerForm(
    "AgentInferencer", "agent", frozenset({"infer_mode", "stopping_criteria", "generation_kwargs"}),
    {"example": "the examples are the ones in the prompt template",
     "max_out_len": "the agent asks for 512 tokens per call, as the reference's agent does",
     "max_seq_len": "the agent's history is sent whole, as the reference's agent does"},
    "AgentInferencer every / every_with_gt runs a ReAct code agent per chat (the reference's CIBench agent, or the "
    "models' CodeAgent definition): the model's code runs in a persistent Python session per conversation, so "
    "`run` needs --allow-code-exec")

UNSUPPORTED_INFERENCERS: dict[str, str] = {
    "MinKPercentInferencer": "Min-K% contamination probing needs token-level scores written per row",
    "ChatMLInferencer": "ChatML datasets with tool calls", "ParallelChatMLInferencer": "ChatML datasets with tool calls",
}

_CHAT_MODES = ("last", "every", "every_with_gt")


def inferencer_name(t: Any) -> str:
    if t is None:
        return "GenInferencer"
    if isinstance(t, str):
        return t.rsplit(".", 1)[-1]
    return str(getattr(t, "__name__", t))


def resolve_inferencer(name: str, settings: Mapping[str, Any] | None = None, *, file: str | None = None,
                       field: str = "infer_cfg.inferencer") -> tuple[InferencerForm, list[str]]:
    """The form an inferencer runs as, and a note for each keyword it ignores; typed errors name file and field."""
    settings = dict(settings or {})
    form = INFERENCERS.get(name)
    if form is None:
        why = UNSUPPORTED_INFERENCERS.get(name)
        if why is not None:
            raise UnsupportedError(f"{name} is not supported: {why}", file=file, field=f"{field}.type", value=name)
        raise UnsupportedError("unknown inferencer", file=file, field=f"{field}.type", value=name,
                               expected="one of " + ", ".join(sorted(INFERENCERS)))
    if name in ("ChatInferencer", "ParallelChatInferencer", "AgentInferencer"):
        mode = settings.get("infer_mode", "last")
        if mode not in _CHAT_MODES:
            raise UnsupportedError(f"unknown {name} infer_mode", file=file, field=f"{field}.infer_mode",
                                   value=mode, expected=" or ".join(repr(m) for m in _CHAT_MODES))
        if mode != "last" and name == "AgentInferencer":  # agent helper: the ReAct code agent (forms/agent_loop.py)
            form = AGENT_TURNS
        elif mode != "last":  # a reply for every assistant turn of the row's chat (forms/chat_loop.py)
            form = CHAT_TURNS
    if form.mode == "sc":
        n = settings.get("sc_size", 1)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise UnsupportedError("sc_size must be a positive whole number", file=file, field=f"{field}.sc_size",
                                   value=n)
    gk = settings.get("generation_kwargs")
    if gk is not None and not isinstance(gk, Mapping):
        raise UnsupportedError("generation_kwargs must be a dict", file=file, field=f"{field}.generation_kwargs",
                               value=gk)
    notes = [form.note] if form.note else []
    ignored = {**_COMMON_IGNORED, **form.ignored}
    for key in settings:
        if key in form.honoured or key in ("labels", "normalizing_str", "gen_field_replace_token"):
            continue
        if key in ignored:
            why = ignored[key]
            notes.append(f"{field}.{key} is ignored" + (f": {why}" if why else ""))
        else:
            notes.append(f"{field}.{key} is not a setting promptweave knows for {name}; ignored")
    return form, notes


def inferencer_mode(name: str, settings: Mapping[str, Any] | None = None, *, file: str | None = None,
                    field: str = "infer_cfg.inferencer") -> str:
    return resolve_inferencer(name, settings, file=file, field=field)[0].mode
