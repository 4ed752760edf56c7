"""Tokens a task used, per row and in total (results ``tokens``; the report shows them per task).

A local model counts exactly, with its own tokenizer, what it received (``prompt_tokens`` on each row); for other
models the count is estimated from the characters (about 4 a token, as ``run --dry-run`` estimates) and the results
say so. Outputs are counted the same way.
"""
from __future__ import annotations

from typing import Any

from promptweave.run.estimate import CHARS_PER_TOKEN, text_chars


def _chars(value: Any) -> int:
    if isinstance(value, dict) and "role" not in value:
        return sum(text_chars(v) for v in value.values())  # ppl: every label's prompt is read
    return text_chars(value)


def count_rows(rows: list[dict[str, Any]], model: Any) -> None:
    """Add ``prompt_tokens`` (exact) to each row a local model can count."""
    ids_of = getattr(model, "prompt_ids", None)
    if ids_of is None:
        return
    for row in rows:
        prompt = row.get("prompt")
        if prompt is None:
            continue
        parts = list(prompt.values()) if isinstance(prompt, dict) and "role" not in prompt else [prompt]
        try:
            counted = [ids_of(p) for p in parts]
        except Exception:  # noqa: BLE001 - counting is a report figure; a prompt it cannot read is not counted
            continue
        if all(c is not None for c in counted):
            row["prompt_tokens"] = sum(len(c) for c in counted)


class TokenTally:
    """A task's token totals, added to row by row."""

    def __init__(self) -> None:
        self.prompt = self.output = 0
        self.exact = True

    def add(self, row: dict[str, Any]) -> None:
        if "prompt_tokens" in row:
            self.prompt += int(row["prompt_tokens"])
        else:
            self.exact = False
            self.prompt += -(-_chars(row.get("prompt")) // CHARS_PER_TOKEN)
        out = row.get("output")
        if isinstance(out, str):
            self.output += -(-len(out) // CHARS_PER_TOKEN)

    def result(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "output": self.output,
                "counted": "exact prompt tokens (the model's tokenizer); outputs estimated" if self.exact
                else f"estimated (characters / {CHARS_PER_TOKEN})"}


def measure_rows(rows: list[dict[str, Any]], task: Any, model: Any, cache: Any) -> None:
    """``prompt_tokens`` and ``truncated`` on each row (:func:`count_rows`, ``truncation.mark_cuts``), remembered in
    the response cache under the model's fingerprint, so a fully cached rerun records the same figures without
    loading the tokenizer (and, with it, torch)."""
    from promptweave.run.truncation import mark_cuts

    fingerprint = getattr(model, "identity_fingerprint", None)
    fp = fingerprint() if callable(fingerprint) else None
    if fp is None or not hasattr(cache, "recall") or getattr(model, "prompt_ids", None) is None:
        count_rows(rows, model)
        mark_cuts(rows, task, model)
        return
    reserve = getattr(task.params, "max_out_len", None) if task.mode == "gen" else 0
    scope = [fp, task.mode, reserve, getattr(model, "max_seq_len", None)]
    keys = [_measure_key(scope, row.get("prompt")) for row in rows]
    todo = []
    for row, key in zip(rows, keys):
        got = cache.recall(key) if row.get("prompt") is not None else {}
        if got is None:
            todo.append((row, key))
            continue
        for field in ("prompt_tokens", "truncated"):
            if field in got:
                row[field] = got[field]
    if todo:
        fresh = [row for row, _ in todo]
        count_rows(fresh, model)
        mark_cuts(fresh, task, model)
        for row, key in todo:
            cache.remember(key, {f: row[f] for f in ("prompt_tokens", "truncated") if f in row})


def _measure_key(scope: list[Any], prompt: Any) -> str:
    import hashlib
    import json

    text = json.dumps(["row-measure-1", scope, prompt], ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
