"""What a PPL score keeps: the summed log-probability and the token count, not every token's log-prob.

PPL without ``normalizing_str`` only ever reads a label prompt's average NLL, so its cache entry is
``{"logprob_sum": s, "tokens": n}``. Entries written before, per-token lists, stay valid under the
same keys and are read the same way; a form that needs the per-token list (LL, ``normalizing_str``)
takes a compact entry as missing and writes the list back, which every reader accepts.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def compact(token_logprobs: Any) -> Any:
    """The compact form of a per-token list (anything else, a row failure, passes as it is)."""
    if isinstance(token_logprobs, list):
        return {"logprob_sum": sum(token_logprobs), "tokens": len(token_logprobs) + 1}
    return token_logprobs


def is_compact(value: Any) -> bool:
    return (isinstance(value, Mapping) and set(value) == {"logprob_sum", "tokens"}
            and isinstance(value["logprob_sum"], (int, float)) and not isinstance(value["logprob_sum"], bool)
            and isinstance(value["tokens"], int) and not isinstance(value["tokens"], bool) and value["tokens"] >= 1)


def usable(value: Any, summed: bool) -> bool:
    """Whether a cached score serves a reader: a per-token list serves every reader, a compact one the summed."""
    if isinstance(value, list):
        return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)
    return summed and is_compact(value)
