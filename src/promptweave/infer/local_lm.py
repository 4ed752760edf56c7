"""What the corpus-loss forms (``inference_ppl``, ``sw_ce_loss``) need of a model: a local transformers model.

Both read per-token cross-entropy straight from the model's logits and the tokenizer's own token strings, which
neither an HTTP endpoint nor vLLM gives; they are refused at plan time on those backends, naming the file.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from promptweave.errors import ModelError, UnsupportedError
from promptweave.models.base import backend_name, capabilities_of

CORPUS_FORMS = {"inference_ppl": "InferencePPLOnlyInferencer", "sw_ce_loss": "SWCELossInferencer"}


def check_local_lm(mode: str, mcfg: Any, *, file: str | None, where: str) -> None:
    """Plan time: a corpus-loss form on anything but the transformers backend is a typed error."""
    if mode not in CORPUS_FORMS:
        return
    from promptweave.compat.models import MODEL_TYPES, type_name
    from promptweave.models.factory import cfg_get

    name = type_name(cfg_get(mcfg, "type"))
    mt = MODEL_TYPES.get(name)
    if mt is not None and mt.backend != "hf":
        raise UnsupportedError(
            f"{CORPUS_FORMS[mode]} reads per-token losses from the model's logits and tokenizer, which only a local "
            f"transformers model gives (this model runs on the {mt.backend} backend)",
            file=file, field=f"{where}.type", value=name,
            expected="a transformers model type (HuggingFaceBaseModel, HuggingFaceCausalLM, HuggingFace)")


def require_local_lm(model: Any, who: str) -> None:
    """Run time: the backend object must expose the tokenizer and the torch model."""
    if not capabilities_of(model).local_lm:
        raise ModelError(f"{who} needs a local transformers model (tokenizer and logits)",
                         field="model", value=backend_name(model),
                         expected="a transformers model type such as HuggingFaceBaseModel")


def prompt_text(rendered: Any, who: str) -> str:
    """The prompt as one string: a message list is joined as the reference's base-model conversion does."""
    if isinstance(rendered, str):
        return rendered
    if isinstance(rendered, (list, tuple)) and all(isinstance(m, Mapping) for m in rendered):
        return "".join(str(m.get("content", m.get("prompt", ""))) for m in rendered)
    if isinstance(rendered, (list, tuple)) and all(isinstance(s, str) for s in rendered):
        return "".join(rendered)
    raise ModelError(f"{who} scores text prompts; this prompt holds token ids", field="rendered", value=rendered)
