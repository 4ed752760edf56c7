"""Token ids of a PPL row's label prompts with their shared text tokenized once.

The label prompts of a row repeat one long context and differ at the end, so tokenizing each in
full tokenizes that context once per label. Here it is tokenized once:

- segment lists (a meta template's ``str | list[int]`` parts, each tokenized on its own): the
  leading segments every prompt shares are encoded once, the rest per prompt; exact by construction;
- strings: the first prompt is tokenized in full with character offsets; the cut is the start of a
  token that begins at a space after a non-space character, some way before the prompts part.
  Each prompt is then the first one's ids up to the cut plus its own text after the cut. The
  first prompt is checked that way (a tokenizer that prepends a marker or appends an end token
  to a text fails the check) and, failing it, every prompt of the row is tokenized in full.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Sequence

MARGIN = 16  # characters kept between the cut and the first character where the prompts differ


def _segments_head(group: Sequence[Any]) -> int:
    n = min(len(p) for p in group)
    j = 0
    while j < n and all(p[j] == group[0][j] for p in group):
        j += 1
    return j


def group_ids(tokenizer: Any, group: Sequence[Any], encode: Callable[[Any], list[int]]) -> list[list[int]]:
    """Each prompt's token ids, equal to ``encode(prompt)`` (see the module docstring)."""
    if len(group) < 2:
        return [encode(p) for p in group]
    if all(isinstance(p, (list, tuple)) and not isinstance(p, str) for p in group):
        j = _segments_head(group)
        if j == 0:
            return [encode(p) for p in group]
        head = encode(list(group[0][:j]))
        return [head + encode(list(p[j:])) for p in group]
    if not all(isinstance(p, str) for p in group) or not getattr(tokenizer, "is_fast", False):
        return [encode(p) for p in group]
    common = len(os.path.commonprefix(list(group)))
    first = group[0]
    if common <= MARGIN:
        return [encode(p) for p in group]
    enc = tokenizer(first, return_offsets_mapping=True)
    ids, offsets = list(enc["input_ids"]), enc["offset_mapping"]
    cut = None
    for t in range(len(ids) - 1, 0, -1):
        at = offsets[t - 1][1]  # the end of the token before: a trimmed offset may leave out a leading space
        start, end = offsets[t]
        if at <= 0 or at > common - MARGIN or start >= end:
            continue
        if first[at] == " " and not first[at - 1].isspace() and start in (at, at + 1):
            cut = t
            break
    if cut is None:
        return [encode(p) for p in group]
    at = offsets[cut - 1][1]
    tail = list(tokenizer(first[at:], add_special_tokens=False)["input_ids"])
    if ids[:cut] + tail != ids:  # the tokenizer is not local at the cut: the whole row in full
        return [encode(p) for p in group]
    head = ids[:cut]
    return [ids] + [head + list(tokenizer(p[at:], add_special_tokens=False)["input_ids"]) for p in group[1:]]
