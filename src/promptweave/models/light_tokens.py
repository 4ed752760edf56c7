"""Counting a local model's prompt tokens without transformers (and so without torch), for ``run --dry-run``.

A tokenizer folder saved by a fast tokenizer holds ``tokenizer.json``, which the ``tokenizers`` library reads on its
own; transformers' fast tokenizers encode through the same object, so the counts are the ones a run's model
receives. Chat message lists are rendered with the folder's chat template in the sandboxed renderer and encoded
without added special tokens, as ``apply_chat_template(tokenize=True)`` does. A folder without ``tokenizer.json``,
or a config with ``tokenizer_kwargs`` (which may change how text is encoded), gets None: the caller estimates.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable


def light_token_counter(path: Any, tokenizer_kwargs: Any = None) -> Callable[[Any], int] | None:
    """``count(rendered) -> int`` read from ``path``'s ``tokenizer.json``, or None when that cannot be exact."""
    if not path or tokenizer_kwargs:
        return None
    folder = Path(str(path)).expanduser()
    if not (folder / "tokenizer.json").is_file():
        return None
    try:
        from tokenizers import Tokenizer
    except ImportError:  # pragma: no cover - tokenizers comes with the hf extra
        return None
    from promptweave.render.chat_template import (
        check_tokenizer_folder,
        has_chat_template,
        hf_messages,
        render_with_chat_template,
        tokenizer_file,
    )

    root = check_tokenizer_folder(folder)  # a tokenizer folder is input: nothing may link out of it
    found = tokenizer_file(root, "tokenizer.json")
    if found is None:
        return None
    tok = Tokenizer.from_file(str(found))
    templated = has_chat_template(str(root))

    def count(rendered: Any) -> int:
        if isinstance(rendered, str):
            return len(tok.encode(rendered, add_special_tokens=True).ids)
        if isinstance(rendered, (list, tuple)) and rendered and all(isinstance(m, dict) for m in rendered):
            if templated:
                text = render_with_chat_template(list(rendered), str(root))
                return len(tok.encode(text, add_special_tokens=False).ids)
            # no chat template: the texts joined by newlines, as the transformers counter estimates them
            texts = [str(m["content"]) if isinstance(m.get("content"), str) else "" for m in hf_messages(rendered)]
            return len(tok.encode("\n".join(texts), add_special_tokens=True).ids)
        total = 0
        for seg in rendered:
            total += len(seg) if isinstance(seg, (list, tuple)) else len(tok.encode(seg, add_special_tokens=False).ids)
        return total

    return count


__all__ = ["light_token_counter"]
