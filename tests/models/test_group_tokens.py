"""A PPL row's label prompts tokenized with their shared text once: always equal to tokenizing each in full."""
from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("transformers")

from promptweave.models.group_tokens import group_ids  # noqa: E402
from promptweave.models.hf import encode_with  # noqa: E402


@functools.lru_cache(maxsize=1)
def tokenizer():
    import tempfile
    from pathlib import Path

    from tiny_lm import build_tiny_lm
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(build_tiny_lm(Path(tempfile.mkdtemp()) / "tok"))


class Counting:
    """The tokenizer, counting the characters it is given."""

    def __init__(self, tok) -> None:
        self.tok, self.chars = tok, 0
        self.is_fast = tok.is_fast

    def __call__(self, text, **kw):
        self.chars += len(text)
        return self.tok(text, **kw)


WORDS = st.sampled_from(["the", "quick", "fox", "Answer:", "Paris", " ", "  ", "\n", "é", "日本", "A.", "?", "<pad>",
                         "<|im_end|>", "12", ",", "jumps"])


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, max_size=40), st.lists(st.lists(WORDS, max_size=5), min_size=1, max_size=4),
       st.sampled_from(["", " ", "\n"]))
def test_equal_to_each_prompt_in_full(context, labels, sep) -> None:
    tok = tokenizer()
    base = " ".join(context)
    group = [base + sep + " ".join(lab) for lab in labels]
    want = [encode_with(tok, p) for p in group]
    assert group_ids(tok, group, lambda p: encode_with(tok, p)) == want
    segs = [["Q: ", base, [5, 6], sep + " ".join(lab)] for lab in labels]
    assert group_ids(tok, segs, lambda p: encode_with(tok, p)) == [encode_with(tok, s) for s in segs]


def test_the_shared_context_is_tokenized_once() -> None:
    tok = Counting(tokenizer())
    context = "The quick brown fox jumps over the lazy dog. " * 20
    group = [f"{context}Answer: {lab}" for lab in ("A", "B", "C", "D")]
    got = group_ids(tok, group, lambda p: encode_with(tok.tok, p))
    assert got == [encode_with(tok.tok, p) for p in group]
    assert tok.chars < 1.3 * len(group[0])  # not 4x the context
