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


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers beyond the methods every backend has (``generate`` / ``chat`` / ``token_logprobs`` /
    ``identity``), declared as its ``capabilities`` attribute. The runner (``infer/``, ``forms/``) reads only this:
    a method named here is called only when its flag says the backend has it."""

    remote: bool = False
    """Requests go to a server through ``run_batch`` (sent concurrently; generation and prompt scoring only)."""
    result_bursts: bool = False
    """``run_batch`` takes ``on_results`` (answers that arrive together, stored in one write)."""
    chat_endpoint: bool = False
    """A remote backend that takes text prompts as one user message (a chat-only server)."""
    tool_calls: bool = False
    """``run_batch("tool_chat", ...)`` sends tool definitions and returns the tool calls (function calling)."""
    planned_batches: bool = False
    """``plan_calls`` / ``plan_group_calls`` form the batches (by token length) instead of ``batch_size`` runs."""
    grouped_scores: bool = False
    """``token_logprobs_groups`` scores groups that share a prefix (a PPL row's labels) in one batch."""
    token_counts: bool = False
    """``count_tokens`` counts a prompt's tokens with the model's own tokenizer."""
    next_token: bool = False
    """``next_token_logprobs`` gives the log-probability of given next tokens (CLP)."""
    local_lm: bool = False
    """A local transformers model: ``tokenizer``, ``torch``, ``forward`` and ``pad_id`` are there (losses per token,
    CLP's choice tokens)."""
    identity_memo: bool = False
    """``identity_fingerprint()`` keys a cached identity, so a cached rerun need not load the tokenizer."""


NO_CAPABILITIES = Capabilities()


class Backend:
    """The contract the runner calls, with every optional method refusing by default; a backend subclasses it,
    overrides what it does and says so in ``capabilities`` (``models/scripted.py`` is the small complete example).

    Every backend: ``name``, ``batch_size``, ``capabilities``, ``identity()``, and whichever of ``generate`` (text
    prompts), ``chat`` (message lists) and ``token_logprobs`` (prompt scoring) its forms use. The others belong to a
    capability (:class:`Capabilities`).
    """

    name: str = "model"
    batch_size: int = 8
    max_seq_len: int | None = None
    path: str = ""
    capabilities: Capabilities = NO_CAPABILITIES

    def _refuse(self, what: str) -> Any:
        from promptweave.errors import ModelError

        raise ModelError(f"this backend has no {what}", field="model", value=self.name)

    def identity(self) -> dict[str, Any]:
        """What makes this model's outputs distinct (the response cache keys on it, with the name and class)."""
        return {}

    def generate(self, prompts: Sequence[Any], params: GenerationParams) -> list[str]:
        return self._refuse("text generation")

    def chat(self, conversations: Sequence[Sequence[Message]], params: GenerationParams) -> list[str]:
        return self._refuse("chat")

    def token_logprobs(self, prompts: Sequence[Any], shared_prefix: bool = True) -> list[list[float]]:
        return self._refuse("prompt scoring (token log-probabilities)")

    # -- optional: each behind its Capabilities flag
    def identity_fingerprint(self) -> str | None:  # identity_memo
        return None

    def run_batch(self, kind: str, items: Sequence[Any], params: GenerationParams | None = None,
                  on_result: Any = None, on_error: Any = None, on_results: Any = None) -> list[Any]:  # remote
        return self._refuse("remote batch sending")

    def plan_calls(self, kind: str, items: Sequence[Any], params: GenerationParams | None = None
                   ) -> list[tuple[list[int], Any]]:  # planned_batches
        return self._refuse("batch planning")

    def plan_group_calls(self, groups: Sequence[Sequence[Any]]) -> list[tuple[list[int], Any]]:  # planned_batches
        return self._refuse("batch planning")

    def token_logprobs_groups(self, groups: Sequence[Sequence[Any]]) -> list[list[list[float]]]:  # grouped_scores
        return self._refuse("grouped prompt scoring")

    def count_tokens(self, rendered: Any) -> int:  # token_counts
        return self._refuse("tokenizer")

    def next_token_logprobs(self, prompts: Sequence[Any], token_ids: Sequence[int]) -> list[list[float]]:
        return self._refuse("next-token log-probabilities")  # next_token

    # local_lm: a local transformers model's own parts (losses per token, CLP's choice tokens)
    tokenizer: Any = None
    torch: Any = None
    pad_id: int | None = None

    def forward(self, input_ids: Any, attention_mask: Any) -> Any:  # local_lm
        return self._refuse("local forward pass")


def capabilities_of(model: Any) -> Capabilities:
    """The backend's declared capabilities; an object that declares none (a bare test double with ``chat`` or
    ``generate``) has none of the optional ones."""
    caps = model.__dict__.get("capabilities") if hasattr(model, "__dict__") else None
    if caps is None:
        caps = getattr(type(model), "capabilities", None)
    return caps if isinstance(caps, Capabilities) else NO_CAPABILITIES


def backend_name(model: Any) -> str:
    """The backend's configured name (its class name when it has none)."""
    name = getattr(model, "name", None)
    return str(name) if name is not None else type(model).__name__


def backend_identity_name(model: Any) -> str | None:
    """The name the backend was configured with, None when it has none (what its identity records)."""
    name = getattr(model, "name", None)
    return None if name is None else name


def backend_identity(model: Any) -> dict[str, Any]:
    """``identity()``, plus the configured name and the class: what the response cache keys on."""
    identity = getattr(model, "identity", None)
    ident = dict(identity()) if callable(identity) else {}
    ident.setdefault("name", getattr(model, "name", None))
    ident.setdefault("class", type(model).__name__)
    return ident


def backend_batch_size(model: Any, default: int = 8) -> int:
    """How many requests a local backend takes at once."""
    return max(1, int(getattr(model, "batch_size", default) or default))
