"""vLLM's in-process engine (GPU machines; install the ``vllm`` extra).

Same surface as the transformers backend: ``generate`` for text or segments (token ids
pass through as a ``TokensPrompt``), ``token_logprobs`` via ``prompt_logprobs`` for PPL.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Sequence

from promptweave.errors import ModelError
from promptweave.models.base import Capabilities, GenerationParams
from promptweave.models.hf import Rendered, cut_at_stop

_ENGINES: dict[str, Any] = {}  # one engine per model and engine settings in a process (GPU memory is claimed once)


def _engine(path: str, kw: dict[str, Any]) -> Any:
    from vllm import LLM

    key = json.dumps([path, kw], sort_keys=True, default=str)
    if key not in _ENGINES:
        _ENGINES[key] = LLM(model=path, **kw)
    return _ENGINES[key]


class VLLMModel:
    """A model served by an in-process ``vllm.LLM``.

    Prefix caching is on unless the config turns it off (``model_kwargs.enable_prefix_caching``): the
    label prompts of a PPL row and the few-shot examples shared by many rows are computed once. Each
    run batch goes to vLLM as one call (``plan_calls``), so its scheduler, not ``batch_size``, forms
    the batches.
    """

    capabilities = Capabilities(planned_batches=True, token_counts=True, next_token=True)

    def __init__(self, path: str, *, name: str | None = None, max_seq_len: int | None = None,
                 eos_token_id: int | Sequence[int] | None = None, engine_kwargs: dict[str, Any] | None = None,
                 batch_size: int = 256) -> None:
        try:
            import vllm  # noqa: F401
        except ImportError as exc:
            raise ModelError("the vLLM backend needs the 'vllm' extra and a GPU: pip install 'promptweave[vllm]'",
                             field="type", value="VLLM") from exc
        self.path = path
        self.name = name or Path(path).name
        self.batch_size = batch_size
        kw = dict(engine_kwargs or {})
        if max_seq_len:
            kw.setdefault("max_model_len", int(max_seq_len))
        kw.setdefault("enable_prefix_caching", True)
        self.llm = _engine(path, kw)
        self.tokenizer = self.llm.get_tokenizer()
        eos = [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id or [])
        self.eos_ids = eos

    def identity(self) -> dict[str, Any]:
        vocab = sorted(self.tokenizer.get_vocab().items())
        tmpl = getattr(self.tokenizer, "chat_template", None) or ""
        return {"backend": "vllm", "path": self.path,
                "tokenizer": hashlib.sha256(repr(vocab).encode()).hexdigest()[:16],
                "chat_template": hashlib.sha256(str(tmpl).encode()).hexdigest()[:16], "eos": self.eos_ids}

    def encode(self, rendered: Rendered) -> list[int]:
        if isinstance(rendered, str):
            return list(self.tokenizer(rendered)["input_ids"])
        ids: list[int] = []
        for seg in rendered:
            ids.extend(self.tokenizer(seg, add_special_tokens=False)["input_ids"] if isinstance(seg, str) else seg)
        return ids

    def count_tokens(self, rendered: Rendered) -> int:
        return len(self.encode(rendered))

    def _prompts(self, prompts: Sequence[Rendered]) -> list[Any]:
        from vllm.inputs import TokensPrompt

        return [TokensPrompt(prompt_token_ids=self.encode(p)) for p in prompts]

    def generate(self, prompts: Sequence[Rendered], params: GenerationParams) -> list[str]:
        from vllm import SamplingParams

        sp = SamplingParams(max_tokens=params.max_out_len, temperature=params.temperature,
                            top_p=params.top_p if params.top_p is not None else 1.0, stop=list(params.stop) or None,
                            stop_token_ids=self.eos_ids or None, seed=params.seed)
        outs = self.llm.generate(self._prompts(prompts), sp, use_tqdm=False)
        return [cut_at_stop(o.outputs[0].text, params.stop) for o in outs]

    def chat(self, conversations: Sequence[Sequence[dict]], params: GenerationParams) -> list[str]:
        """Answer message lists through the tokenizer's own chat template (``VLLMwithChatTemplate`` configs)."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise ModelError("this tokenizer has no chat_template, so it cannot take message lists; give the "
                             "model a meta template instead", field="path", value=self.path)
        prompts: list[Rendered] = []
        for conv in conversations:
            from promptweave.models.openai_compat import openai_message
            from promptweave.render.chat_template import chat_template_ids

            prompts.append([chat_template_ids(self.tokenizer, [openai_message(m) for m in conv])])
        return self.generate(prompts, params)

    def token_logprobs(self, prompts: Sequence[Rendered], shared_prefix: bool = True) -> list[list[float]]:
        """Per-token log-probs (tokens 2..n); vLLM's prefix caching shares common prefixes itself."""
        from vllm import SamplingParams

        sp = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0)
        inputs = self._prompts(prompts)
        outs = self.llm.generate(inputs, sp, use_tqdm=False)
        result = []
        for inp, o in zip(inputs, outs):
            ids = inp["prompt_token_ids"]
            lps = []
            for tok, entry in zip(ids[1:], o.prompt_logprobs[1:]):
                lps.append(float(entry[tok].logprob))
            result.append(lps)
        return result

    def plan_calls(self, kind: str, items: Sequence[Any], params: GenerationParams | None = None
                   ) -> list[tuple[list[int], Callable[[], list]]]:
        """All of a batch's requests in one call: vLLM's scheduler batches them (see the class docstring)."""
        every = list(range(len(items)))
        if kind == "generate":
            return [(every, lambda: self.generate(items, params or GenerationParams()))]
        if kind == "chat":
            return [(every, lambda: self.chat(items, params or GenerationParams()))]
        if kind == "score":
            return [(every, lambda: self.token_logprobs(items, shared_prefix=False))]
        return [(every, lambda: self.next_token_logprobs([p for p, _ in items], items[0][1]))]

    def plan_group_calls(self, groups: Sequence[Sequence[Rendered]]) -> list[tuple[list[int], Callable[[], list]]]:
        """Every group's prompts in one call; prefix caching shares each group's prefix."""
        def run() -> list[list[list[float]]]:
            flat = self.token_logprobs([p for g in groups for p in g])
            out, at = [], 0
            for g in groups:
                out.append(flat[at:at + len(g)])
                at += len(g)
            return out

        return [(list(range(len(groups))), run)]

    def next_token_logprobs(self, prompts: Sequence[Rendered], token_ids: Sequence[int]) -> list[list[float]]:
        raise ModelError("CLP on vLLM is not supported yet; use the transformers backend", field="type",
                         value="VLLM")
