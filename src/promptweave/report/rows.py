"""Per-row facts the page needs beside the rows themselves (computed once, in Python)."""
from __future__ import annotations

import json
from typing import Any


def prompt_chars(prompt: Any) -> int:
    """Characters a prompt holds: a text's length, a message list's contents, a ppl row's longest label."""
    if prompt is None:
        return 0
    if isinstance(prompt, str):
        return len(prompt)
    if isinstance(prompt, dict) and not ("role" in prompt and ("prompt" in prompt or "content" in prompt)):
        return max((prompt_chars(v) for v in prompt.values()), default=0)
    if isinstance(prompt, dict):
        return prompt_chars(prompt.get("prompt", prompt.get("content")))
    if isinstance(prompt, list):
        total = 0
        for m in prompt:
            if isinstance(m, str):
                total += len(m)
            elif isinstance(m, dict):
                body = m.get("prompt", m.get("content", m.get("text", "")))
                total += len(body) if isinstance(body, str) else len(json.dumps(body, ensure_ascii=False))
            elif isinstance(m, list):  # token-id segments
                total += len(m)
        return total
    return len(str(prompt))


def prompt_text(prompt: Any) -> str:
    """A prompt as one comparable text (messages one per block with their role), for diffs."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, dict) and not ("role" in prompt):
        return "\n".join(f"=== label {k} ===\n{prompt_text(v)}" for k, v in prompt.items())
    if isinstance(prompt, list):
        out = []
        for m in prompt:
            if isinstance(m, dict):
                body = m.get("prompt", m.get("content", ""))
                out.append(f"[{m.get('role', '?')}]\n" + (body if isinstance(body, str)
                                                          else json.dumps(body, ensure_ascii=False)))
            else:
                out.append(m if isinstance(m, str) else json.dumps(m))
        return "\n".join(out)
    return json.dumps(prompt, ensure_ascii=False)


def row_key(row: dict) -> Any:
    """What identifies a row across runs: its index, and its turn for multi-turn rows."""
    return (row.get("index"), row.get("turn_id", row.get("turn")))
