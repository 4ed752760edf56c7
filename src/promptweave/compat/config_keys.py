"""What promptweave does with every key a dataset, model or eval config may hold (OpenCompass 0.5.4, AISBench 3.1,
and promptweave's own): data only, read by ``compat/key_check.py`` at plan time.

Each key maps to a :class:`Key`: its ``action`` and a short ``what`` (for ``refused``: what to do instead).

- ``used``: read, and does what the reference does with it;
- ``loader``: an argument of the dataset's loader class (the native loader reads the ones it needs);
- ``noted``: not used here, and said so in the plan (``compat/models.py``'s notes): it changes nothing sent or
  scored, or the plan names what runs instead;
- ``inert``: changes nothing sent or scored (names, summaries, scheduling, a reference-only bookkeeping field);
- ``other_types``: read only by model types promptweave refuses by type (their type is refused first);
- ``refused``: would change what is sent or scored and is not implemented: refused at plan time (PW195), unless its
  value is one of ``inert_values`` (the value that changes nothing).

A key in none of the tables is a warning naming it (a typo, or a newer release's key).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

USED, LOADER, NOTED, INERT, OTHER_TYPES, REFUSED = "used", "loader", "noted", "inert", "other_types", "refused"
ACTIONS = (USED, LOADER, NOTED, INERT, OTHER_TYPES, REFUSED)


@dataclass(frozen=True)
class Key:
    action: str
    what: str = ""
    inert_values: tuple[Any, ...] = ()


def _loader_args(*names: str) -> dict[str, Key]:
    return {n: Key(LOADER, "passed to the dataset's loader") for n in names}


DATASET_KEYS: dict[str, Key] = {
    "abbr": Key(USED, "the dataset's name in results and file names"),
    "type": Key(USED, "the loader class"),
    "path": Key(USED, "where the loader reads the data"),
    "reader_cfg": Key(USED, "input / output columns and splits"),
    "infer_cfg": Key(USED, "prompt template, retriever, inferencer"),
    "eval_cfg": Key(USED, "postprocessors and evaluator"),
    "judge_infer_cfg": Key(USED, "AISBench's judge stage (evaluate/judge_stage.py)"),
    "n": Key(USED, "each row repeated n times"),
    "k": Key(REFUSED, "pass@k / G-Pass@k over a row's n samples is not computed here; drop k (each sample is then "
                      "scored as a row) or score with the reference", inert_values=(1, (1,), [1])),
    "mode": Key(USED, "subjective judging: singlescore / m2n / ..."),
    "base_models": Key(USED, "subjective judging: the models compared against"),
    "given_pred": Key(USED, "subjective judging: predictions given in the config"),
    "infer_order": Key(USED, "subjective judging: the order of a pair's answers"),
    "summarizer": Key(INERT, "OpenCompass's subjective summary tables (results are written per dataset)"),
    "eval_mode": Key(INERT, "read by OpenCompass's subjective summarizers only"),
    "name": Key(LOADER, "passed to the dataset's loader (a subset name)"),
    "data_files": Key(LOADER, "passed to the dataset's loader"),
    "split": Key(LOADER, "passed to the dataset's loader"),
    "trust_remote_code": Key(NOTED, "remote code from a dataset hub is never run"),
    # promptweave's own
    "rows": Key(USED, "the rows themselves, in the config (promptweave)"),
    "cache_dir": Key(LOADER, "where a hub dataset is cached (promptweave)"),
    "flavour": Key(LOADER, "a loader variant (promptweave)"),
    "prompt_variants": Key(USED, "spread's prompt variants (promptweave)"),
    **_loader_args(
"alignment_bench_config_name", "alignment_bench_config_path", "alpha", "answer_path", "audio_type", "base_path",
    "cate", "category", "category_name", "challenging_subset", "coded_wordlen", "config", "cot", "dataset",
    "dataset_languages", "dataset_splits", "dataset_version", "depth", "depths", "diff", "difficulty",
    "disable_shuffle", "experiment_filter", "field", "file_list", "file_name", "file_path", "filename",
    "fixed_schedule_auto_offset", "fixed_schedule_end_offset", "fixed_schedule_start_offset", "freq_cw", "freq_ucw",
    "generated_prompts_path", "guide", "image_path", "image_type", "index", "instruction_type", "internet_check",
    "is_cot", "label", "lang", "lang_fullname", "language", "length", "length_buffer", "libs", "local_mode",
    "max_cut", "max_samples", "meta_path", "mini_set", "mm_type", "mult_choice_prompt", "needle_file_name", "num",
    "num_chains", "num_cw", "num_frames", "num_hops", "num_needle_k", "num_needle_q", "num_needle_v", "num_needles",
    "num_repeats", "num_repeats_per_file", "open_prompt", "open_prompt_template", "program_lang", "prompt",
    "prompt_mode", "prompt_style", "property", "property_name", "random_seed", "release_version", "repeats",
    "sample_size", "samples", "sandbox", "setting_name", "single_answer_cot_template", "source", "split_name",
    "subset", "subset_list", "subtask", "tag", "task", "task_family", "task_type", "test_path", "tokenizer_model",
    "tokens_to_generate", "train_path", "type_haystack", "type_needle_k", "type_needle_v", "version", "video_path",
    "video_type", "with_bg", "with_circular",),
}
"""A dataset dict's keys."""

EVAL_KEYS: dict[str, Key] = {
    "evaluator": Key(USED, "the scoring class"),
    "pred_postprocessor": Key(USED, "applied to each prediction before scoring"),
    "dataset_postprocessor": Key(USED, "applied to each gold answer"),
    "pred_role": Key(USED, "kept for the record (the reference's extraction never changes a prediction)"),
    "model_postprocessor": Key(REFUSED, "OpenCompass's model-based answer extraction is not run here; remove "
                                        "model_postprocessor or score with the reference"),
    "sc_size": Key(USED, "self-consistency: the number of samples voted on"),
    "k": Key(INERT, "not read by the references' evaluation either (an evaluator takes k in its own dict)"),
    "analyze_contamination": Key(REFUSED, "OpenCompass's contamination analysis (per-subset scores) is not run here; "
                                          "remove analyze_contamination", inert_values=(False,)),
    "ds_column": Key(INERT, "not read by the reference's evaluation either"),
    "ds_split": Key(INERT, "not read by the reference's evaluation either"),
    "num_gpus": Key(INERT, "where the reference runs its evaluation"),
    "score_per": Key(USED, "multi-turn scoring: per turn or per conversation"),
    "conversation_reduce": Key(USED, "multi-turn scoring: how a conversation's turns combine"),
}
"""An ``eval_cfg``'s keys."""

MODEL_KEYS: dict[str, Key] = {
    "abbr": Key(USED, "the model's name in results and file names"),
    "type": Key(USED, "the backend (compat/models.py)"),
    "path": Key(USED, "checkpoint, or the served model's name"),
    "model": Key(USED, "the served model's name"),
    "batch_size": Key(USED, "requests in flight (API) or rows per batch (local)"),
    "max_out_len": Key(USED, "tokens generated at most"),
    "max_seq_len": Key(USED, "prompt budget"),
    "meta_template": Key(USED, "roles and their markers"),
    "generation_kwargs": Key(USED, "sampling settings sent with each request"),
    "gen_config": Key(USED, "TurboMind's sampling settings"),
    "engine_config": Key(USED, "TurboMind / vLLM engine settings"),
    "model_kwargs": Key(USED, "passed to the checkpoint's loader"),
    "tokenizer_kwargs": Key(USED, "passed to the tokenizer's loader"),
    "tokenizer_path": Key(USED, "the tokenizer's checkpoint"),
    "stop_words": Key(USED, "generation stops at any of them"),
    "temperature": Key(USED, "sampling temperature"),
    "pred_postprocessor": Key(USED, "applied to each reply before the dataset's"),
    "api_key": Key(USED, "the API key (the env rule applies)"),
    "key": Key(USED, "the API key (the env rule applies)"),
    "openai_api_base": Key(USED, "the endpoint"),
    "url": Key(USED, "the endpoint"),
    "host_ip": Key(USED, "the endpoint's host"),
    "host_port": Key(USED, "the endpoint's port"),
    "enable_ssl": Key(USED, "https instead of http"),
    "retry": Key(USED, "attempts per request"),
    "query_per_second": Key(USED, "request starts per second, at most"),
    "request_rate": Key(USED, "AISBench's paced request starts (models/pacing.py)"),
    "traffic_cfg": Key(USED, "AISBench's burstiness / ramp-up of paced requests"),
    "concurrency": Key(USED, "requests in flight"),
    "extra_body": Key(USED, "merged into each request body"),
    "stream": Key(USED, "AISBench's service types stream; others read the reply whole (noted)"),
    "returns_tool_calls": Key(USED, "function-calling replies read as tool calls"),
    "run_cfg": Key(NOTED, "promptweave schedules tasks itself"),
    "attr": Key(NOTED, "AISBench's local/service marker; the type decides"),
    "use_timestamp": Key(NOTED, "AISBench's trace replay is not supported"),
    "trust_remote_code": Key(NOTED, "remote code in checkpoints is never run"),
    "end_str": Key(NOTED, "use stop_words"),
    "fastchat_template": Key(NOTED, "use the tokenizer's chat template or a meta_template"),
    "pad_token_id": Key(NOTED, "the tokenizer's pad token is used"),
    "batch_padding": Key(NOTED, "local models pad their own batches"),
    "backend": Key(NOTED, "the type decides the backend"),
    "verbose": Key(INERT, "logging"),
    "num_gpus": Key(NOTED, "promptweave schedules tasks itself"),
    "stream_chunk_size": Key(INERT, "how a streamed reply is read"),
    "max_completion_tokens": Key(REFUSED, "sent instead of max_tokens by OpenAI's o1 models; not sent here: use "
                                          "max_out_len (sent as max_tokens) or extra_body"),
    "min_out_len": Key(REFUSED, "a minimum number of generated tokens is not implemented; remove min_out_len"),
    "openai_extra_kwargs": Key(REFUSED, "not sent here: put the fields in extra_body"),
    "additional_stop_symbols": Key(OTHER_TYPES, "LLaMA2-Accessory models (refused by type)"),
    "llama_config": Key(OTHER_TYPES, "LLaMA2-Accessory models (refused by type)"),
    "llama_type": Key(OTHER_TYPES, "LLaMA2-Accessory models (refused by type)"),
    "pretrained_path": Key(OTHER_TYPES, "LLaMA2-Accessory models (refused by type)"),
    "quant": Key(OTHER_TYPES, "LLaMA2-Accessory models (refused by type)"),
    "with_visual": Key(OTHER_TYPES, "LLaMA2-Accessory models (refused by type)"),
    "vision_kwargs": Key(OTHER_TYPES, "vision-language models (refused by type)"),
    "sample_kwargs": Key(OTHER_TYPES, "AISBench's offline vision-language vLLM model (refused by type)"),
    "device_kwargs": Key(OTHER_TYPES, "AISBench's image-editing model (refused by type)"),
    "infer_kwargs": Key(OTHER_TYPES, "AISBench's image-editing model (refused by type)"),
    "model_name": Key(OTHER_TYPES, "AISBench's Triton models (refused by type)"),
    # promptweave's own
    "kind": Key(USED, "lm (text) or api (chat) (promptweave)"),
    "base_url": Key(USED, "the endpoint (promptweave)"),
    "endpoint": Key(USED, "chat or completions (promptweave)"),
    "rpm": Key(USED, "request starts per minute, at most (promptweave)"),
    "timeout": Key(USED, "seconds per request (promptweave)"),
    "max_retries": Key(USED, "retries per request (promptweave)"),
    "backoff_base": Key(USED, "retry back-off (promptweave)"),
    "max_workers": Key(USED, "requests in flight (promptweave)"),
    "api_key_env": Key(USED, "the environment variable holding the API key (promptweave)"),
    "dialect": Key(USED, "how prompts are rendered (promptweave)"),
    "dtype": Key(USED, "local weights' dtype (promptweave)"),
    "device": Key(USED, "local model's device (promptweave)"),
    "revision": Key(USED, "checkpoint revision (promptweave)"),
    "eos_token_id": Key(USED, "end-of-sequence token (promptweave)"),
    "max_batch_tokens": Key(USED, "local batching budget (promptweave)"),
    "num_threads": Key(USED, "local CPU threads (promptweave)"),
    "seed": Key(USED, "sampling seed (promptweave)"),
    "peft_path": Key(USED, "refused with what to do: merge the adapter first"),
    "chat_template": Key(USED, "a chat template of the config's own (promptweave)"),
    "input_price": Key(USED, "cost estimate (promptweave)"),
    "output_price": Key(USED, "cost estimate (promptweave)"),
    "media_placeholders": Key(USED, "where images go in a text prompt (promptweave)"),
    "name": Key(USED, "the model's display name (promptweave)"),
    "llm": Key(USED, "an agent's model (promptweave)"),
    "agent_type": Key(USED, "an agent's kind (promptweave)"),
    "actions": Key(USED, "an agent's tools (promptweave)"),
    "max_turn": Key(USED, "an agent's turns at most (promptweave)"),
    "protocol": Key(USED, "an agent's reply protocol (promptweave)"),
    "_lint_stand_in": Key(INERT, "lint's stand-in model marker (promptweave)"),
}
"""A model dict's keys."""

TABLES: dict[str, dict[str, Key]] = {"dataset": DATASET_KEYS, "eval": EVAL_KEYS, "model": MODEL_KEYS}
