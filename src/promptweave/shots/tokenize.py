"""Word tokenizers for BM25: our own (no downloads) and, where installed, nltk's ``word_tokenize``."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

from promptweave.errors import RetrieverError

# Runs of word characters, and every other non-space character on its own. Simpler than a
# treebank tokenizer (which needs nltk's data); pick "nltk" to reproduce the reference's choices.
_WORD = re.compile(r"\w+|[^\w\s]")

Tokenizer = Callable[[str], list[str]]


def regex_tokenize(text: str) -> list[str]:
    """Split into runs of word characters and single punctuation marks; case is kept."""
    return _WORD.findall(text)


def lower_tokenize(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def whitespace_tokenize(text: str) -> list[str]:
    return text.split()


@lru_cache(maxsize=1)
def _nltk() -> Tokenizer:
    try:
        from nltk.tokenize import word_tokenize
    except ImportError:
        raise RetrieverError("tokenizer 'nltk' needs the nltk package", field="tokenizer", value="nltk",
                             expected="pip install 'promptweave[nltk]' (and its punkt data), or tokenizer='regex'") from None
    try:
        word_tokenize("probe sentence.")
    except LookupError:
        raise RetrieverError("tokenizer 'nltk' needs nltk's punkt data, which is not installed", field="tokenizer",
                             value="nltk", expected="the punkt/punkt_tab data installed locally, "
                                                    "or tokenizer='regex'") from None
    return word_tokenize


TOKENIZERS: dict[str, Callable[[], Tokenizer]] = {
    "regex": lambda: regex_tokenize,
    "lower": lambda: lower_tokenize,
    "whitespace": lambda: whitespace_tokenize,
    "nltk": _nltk,
}


def get_tokenizer(name: str) -> Tokenizer:
    """Look a tokenizer up by name: ``regex`` (default), ``lower``, ``whitespace`` or ``nltk``."""
    make = TOKENIZERS.get(name)
    if make is None:
        raise RetrieverError(f"unknown tokenizer {name!r}", field="tokenizer", value=name,
                             expected="one of " + ", ".join(TOKENIZERS))
    return make()
