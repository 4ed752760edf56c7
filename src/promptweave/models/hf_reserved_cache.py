"""A KV cache for ``model.generate`` that writes each step in place instead of concatenating.

transformers' default cache (``DynamicLayer``) grows by ``torch.cat`` at every decoding step,
so each new token copies the whole cache of every layer: on CPU that copy was 14% of a
generation's time (random-init Llama, prompts of 20-400 tokens, 32 new tokens). Here each
full-attention layer gets, on its first update, a buffer with room for the tokens still to
come; every step writes its keys and values into that room and the layer hands attention a
view of the filled part. The values attention sees are the same numbers in the same shape, so
the outputs are the same (greedy texts equal, tested against the default cache).

Only full-attention layers are replaced; sliding-window and linear-attention layers stay as
transformers builds them for the model. A cache that was reordered or cut by someone else
(beam search, assisted decoding) is taken back into a fresh buffer on its next update.
``reserved_cache`` returns None where this transformers or model cannot take it (older
``Cache`` API, a model that builds its own cache, a generation config naming a cache
implementation): the caller then lets ``generate`` build its default.
"""
from __future__ import annotations

import inspect
from typing import Any


def _layer_class(torch: Any, base: type, room: int) -> type:
    class ReservedLayer(base):
        _layer_type = None  # never registered in transformers' own layer-type mapping
        _buf: Any = None  # [keys buffer, values buffer, keys view, values view, filled length]
        keys: Any  # the base layer's own (annotated here only: the base sets it)

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            if self._buf is None or self.keys is not self._buf[2]:
                self._adopt(key_states, value_states)
            kb, vb, _, _, used = self._buf
            end = used + key_states.shape[-2]
            if end > kb.shape[-2]:  # more tokens than planned (a caller that asks for more): grow once, doubled
                extra = max(end, 2 * kb.shape[-2]) - kb.shape[-2]
                kb = torch.cat([kb, kb.new_empty(kb.shape[:-2] + (extra, kb.shape[-1]))], dim=-2)
                vb = torch.cat([vb, vb.new_empty(vb.shape[:-2] + (extra, vb.shape[-1]))], dim=-2)
            kb[..., used:end, :] = key_states
            vb[..., used:end, :] = value_states
            self.keys, self.values = kb[..., :end, :], vb[..., :end, :]
            self._buf = [kb, vb, self.keys, self.values, end]
            return self.keys, self.values

        def _adopt(self, key_states: Any, value_states: Any) -> None:
            """A buffer holding what the layer has (nothing, or a cache changed elsewhere) plus the room."""
            old_k, old_v = self.keys, self.values
            have = old_k.shape[-2] if old_k is not None and old_k.numel() else 0
            cap = have + key_states.shape[-2] + room
            kb = key_states.new_empty(key_states.shape[:-2] + (cap, key_states.shape[-1]))
            vb = value_states.new_empty(value_states.shape[:-2] + (cap, value_states.shape[-1]))
            if have:
                kb[..., :have, :] = old_k
                vb[..., :have, :] = old_v
            self._buf = [kb, vb, None, None, have]

    return ReservedLayer


def cache_argument(model: Any) -> str:
    """The name ``model.forward`` (and so ``generate``) takes a cache by: ``cache`` (transformers 5) or
    ``past_key_values``."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in params else "past_key_values"


def reserved_cache(torch: Any, model: Any, room: int) -> Any:
    """A cache for one ``generate`` call that will add up to ``room`` tokens per row, or None (see the module
    docstring for when)."""
    try:
        from transformers.cache_utils import DynamicCache, DynamicLayer
    except ImportError:
        return None
    supports = getattr(model, "_supports_default_dynamic_cache", None)
    if supports is None or not supports():
        return None
    gen_cfg = getattr(model, "generation_config", None)
    if getattr(gen_cfg, "cache_implementation", None) is not None:
        return None
    try:
        cache = DynamicCache(config=model.config.get_text_config(decoder=True))
    except Exception:  # noqa: BLE001 - an older or different Cache API: generate builds its own
        return None
    layers = getattr(cache, "layers", None)
    if not layers or getattr(cache, "layer_class_to_replicate", None) is not None:
        return None
    reserved = _layer_class(torch, DynamicLayer, max(0, int(room)))
    swapped = 0
    for i, layer in enumerate(layers):
        if type(layer) is DynamicLayer:  # full attention; sliding and linear layers keep their own kind
            layers[i] = reserved()
            swapped += 1
    return cache if swapped else None
