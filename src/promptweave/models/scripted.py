"""The reference backend: small, deterministic, in-process, and complete.

It implements the whole contract of :class:`~promptweave.models.base.Backend` the way a new backend would (declared
``capabilities``, an ``identity`` the response cache keys on, ``generate`` / ``chat`` / ``token_logprobs`` /
``count_tokens``), answering from a script instead of a network or weights. Tests use it where a real model would
add nothing; a new backend starts from a copy of it (``docs/extending.md``).

Tokens are characters here: ``count_tokens`` is the prompt's length and ``token_logprobs`` gives one value per
character after the first, so the numbers are exact and easy to check by hand.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from promptweave.errors import ModelError
from promptweave.models.base import Backend, Capabilities, GenerationParams, Message

Answer = Callable[[str], str]


def prompt_text(prompt: Any) -> str:
    """A rendered prompt as one string: text as is, segments joined, a message list's last user message."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)) and prompt and all(isinstance(m, dict) for m in prompt):
        users = [m for m in prompt if m.get("role") in ("user", "HUMAN")] or list(prompt)
        content = users[-1].get("content", users[-1].get("prompt", ""))
        return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, sort_keys=True)
    if isinstance(prompt, (list, tuple)) and all(isinstance(s, str) for s in prompt):
        return "".join(prompt)
    raise ModelError("the scripted backend takes text, text segments or chat messages", field="prompt",
                     value=prompt)


def char_logprob(ch: str) -> float:
    """The scripted log-probability of one character (token): a fixed value from its code point."""
    return -0.25 * (1 + ord(ch) % 7)


class ScriptedModel(Backend):
    """Answers each prompt with ``answer(text)`` (default: the next of ``replies``, in order); records every request.

    ``ScriptedModel(replies=["B", "A"])`` answers in order and refuses a call past the script;
    ``ScriptedModel(answer=lambda text: "B")`` answers every prompt from its text.
    """

    capabilities = Capabilities(token_counts=True)

    def __init__(self, replies: Sequence[str] = (), *, answer: Answer | None = None, name: str = "scripted",
                 batch_size: int = 8) -> None:
        self.name = name
        self.batch_size = max(1, int(batch_size))
        self.replies = list(replies)
        self.answer = answer
        self.sent: list[tuple[str, Any]] = []  # (kind, prompt) of every request, in order

    def identity(self) -> dict[str, Any]:
        script = json.dumps(self.replies, ensure_ascii=False) if self.answer is None else repr(self.answer)
        return {"backend": "scripted", "script": hashlib.sha256(script.encode()).hexdigest()[:16]}

    def _reply(self, kind: str, prompt: Any) -> str:
        self.sent.append((kind, prompt))
        if self.answer is not None:
            return self.answer(prompt_text(prompt))
        answered = sum(1 for k, _ in self.sent if k in ("generate", "chat")) - 1
        if answered >= len(self.replies):
            raise ModelError(f"the script has {len(self.replies)} replies and this is call {answered + 1}",
                             field="model", value=self.name, expected="more replies, or an answer function")
        return self.replies[answered]

    def generate(self, prompts: Sequence[Any], params: GenerationParams) -> list[str]:
        return [self._reply("generate", p)[:max(0, params.max_out_len)] for p in prompts]

    def chat(self, conversations: Sequence[Sequence[Message]], params: GenerationParams) -> list[str]:
        return [self._reply("chat", list(c))[:max(0, params.max_out_len)] for c in conversations]

    def token_logprobs(self, prompts: Sequence[Any], shared_prefix: bool = True) -> list[list[float]]:
        out = []
        for p in prompts:
            self.sent.append(("score", p))
            out.append([char_logprob(ch) for ch in prompt_text(p)[1:]])
        return out

    def count_tokens(self, rendered: Any) -> int:
        return len(prompt_text(rendered))


__all__ = ["ScriptedModel", "char_logprob", "prompt_text"]
