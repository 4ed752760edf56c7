"""Fitting in-context examples into ``max_seq_len`` from per-example token counts."""
from __future__ import annotations

from typing import Hashable, Sequence, TypeVar

from promptweave.errors import ConfigError

T = TypeVar("T", bound=Hashable)


def fit_shots(shot_ids: Sequence[T], shot_tokens: Sequence[int], base_tokens: int | Sequence[int],
              max_seq_len: int | None, *, reserve: int = 0) -> list[T]:
    """Keep the longest leading run of ``shot_ids`` whose prompt fits in ``max_seq_len``.

    ``shot_tokens[i]`` is the token count of example ``i`` as rendered in the prompt
    (each counted once, no re-tokenising); ``base_tokens`` is the count of everything
    else (instruction + question + template glue). For PPL, pass one base count per
    label: the largest decides, so every label of a row is scored with the same
    examples. ``reserve`` holds room for generated tokens (``max_out_len`` in gen mode).
    Examples are dropped from the end, as the references do; when even zero examples
    do not fit, none are kept (a local model then cuts a generation prompt from the left,
    with a warning, and refuses to score an over-long ppl prompt).
    :class:`promptweave.engine.fit.ShotFitter` measures the counts and checks the result.
    """
    if len(shot_ids) != len(shot_tokens):
        raise ConfigError("one token count per in-context example is needed", field="shot_tokens",
                          value=len(shot_tokens), expected=f"{len(shot_ids)} counts")
    if max_seq_len is None:
        return list(shot_ids)
    base = max(base_tokens) if isinstance(base_tokens, Sequence) else int(base_tokens)
    room = max_seq_len - reserve - base
    used = 0
    kept: list[T] = []
    for sid, n in zip(shot_ids, shot_tokens):
        if used + n > room:
            break
        used += n
        kept.append(sid)
    return kept
