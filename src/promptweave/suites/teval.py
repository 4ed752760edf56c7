"""T-Eval (tool use): its answer postprocessor."""
from __future__ import annotations

from typing import Any


def teval_postprocess(text: Any) -> str:
    """T-Eval: the reply up to the first end-of-turn marker, without a ```json fence or doubled braces."""
    if isinstance(text, str):
        for marker in ("<eoa>", "<TOKENS_UNUSED_1>", "<|im_end|>", "\nuser", "\nUSER", "[INST]"):
            text = text.split(marker)[0]
        text = text.strip()
        text = text.removeprefix("```json")
        text = text.strip("`").strip()
        if text[:2] == "{{" and text[-2:] == "}}":
            text = text[1:-1]
    return str(text)


POSTPROCESSORS = {
    "teval_postprocess": teval_postprocess,
}
