"""The small protocol every model backend implements."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

Message = dict[str, Any]
"""An OpenAI-style chat message: ``{"role": "user"|"assistant"|"system", "content": str | list}``."""


@dataclass(frozen=True)
class GenerationParams:
    """Decoding settings shared by every backend."""

    max_out_len: int = 512
    temperature: float = 0.0
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class ChatModel(Protocol):
    """A model that answers chat message lists."""

    name: str

    def chat(self, conversations: Sequence[Sequence[Message]], params: GenerationParams) -> list[str]:
        """Answer each conversation; one reply per conversation, in order."""
        ...


@runtime_checkable
class TextModel(Protocol):
    """A model that continues text and scores continuations."""

    name: str

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[str]:
        ...

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        """Sum of log-probabilities of each continuation given its context."""
        ...


@runtime_checkable
class ScoringModel(Protocol):
    """A model that gives per-token log-probabilities of whole prompts (what PPL needs).

    ``rendered`` prompts are strings or, for local models, segment lists
    (``str | list[int]``) whose token-id lists pass through untouched.
    """

    name: str

    def token_logprobs(self, prompts: Sequence[Any], shared_prefix: bool = True) -> list[list[float]]:
        """Log-probability of tokens 2..n of each prompt; ``shared_prefix`` scores the prompts as one group."""
        ...

    def identity(self) -> dict[str, Any]:
        """What makes this model's outputs distinct (the response cache keys on it)."""
        ...
