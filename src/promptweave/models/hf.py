"""A local Hugging Face transformers causal LM (CPU or GPU).

Prompts arrive as a string or as a list of segments (``str | list[int]``): strings
are tokenized, token-id lists pass through untouched, so a meta template's exact
special tokens reach the model. Every form's requests are batched by exact token length
(``length_batches``; rows keep their order): generation left-padded, scoring right-padded. The
label prompts of a PPL row share a prefix, run once in one packed row with every label's suffix
(``hf_packed``; the KV cache where an architecture refuses the packed row's mask).
"""
from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence, Union

from promptweave.errors import ModelError, PromptweaveWarning
from promptweave.models.base import Capabilities, GenerationParams
from promptweave.models.length_batches import batching_note, length_batches

Segment = Union[str, list]
Rendered = Union[str, Sequence[Segment]]

_DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16", "half": "float16",
           "bfloat16": "bfloat16", "bf16": "bfloat16"}


@dataclass
class ForwardStats:
    """Token positions pushed through the model (padding included), for the PPL benchmark."""

    forward_tokens: int = 0
    forward_calls: int = 0
    truncated_prompts: int = 0  # prompts cut from the left to fit max_seq_len (gen / CLP)


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """Cut ``text`` at the earliest occurrence of any stop string."""
    cut = len(text)
    for s in stop:
        if s:
            i = text.find(s)
            if i != -1:
                cut = min(cut, i)
    return text[:cut]


def encode_with(tokenizer: Any, rendered: Rendered) -> list[int]:
    """Token ids of a prompt: a string gets the tokenizer's usual special tokens; segments get none added."""
    if isinstance(rendered, str):
        return list(tokenizer(rendered)["input_ids"])
    ids: list[int] = []
    for seg in rendered:
        if isinstance(seg, str):
            ids.extend(tokenizer(seg, add_special_tokens=False)["input_ids"])
        elif isinstance(seg, (list, tuple)) and all(isinstance(t, int) for t in seg):
            ids.extend(seg)
        else:
            raise ModelError("a prompt segment must be a string or a list of token ids", field="rendered",
                             value=seg)
    return ids


def _message_text(m: dict) -> str:
    c = m.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return ""


def token_counter(tokenizer: Any) -> Callable[[Any], int]:
    """Counts a rendered prompt's tokens as this tokenizer's model receives it.

    Chat message lists (OpenAI form or the renderer's ``{role: HUMAN, prompt}``) go
    through the tokenizer's chat template with the generation prompt; without one
    their texts are counted joined by newlines (an estimate).
    """
    from promptweave.render.chat import to_openai_messages

    def count(rendered: Any) -> int:
        if isinstance(rendered, (list, tuple)) and rendered and all(isinstance(m, dict) for m in rendered):
            msgs = [m if "content" in m else to_openai_messages([m])[0] for m in rendered]
            if getattr(tokenizer, "chat_template", None):
                from promptweave.render.chat_template import chat_template_ids

                return len(chat_template_ids(tokenizer, msgs))
            return len(tokenizer("\n".join(_message_text(m) for m in msgs))["input_ids"])
        return len(encode_with(tokenizer, rendered))

    return count


def _file_hash(path: Path) -> str | None:
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return None


def _generation_eos(path: str, revision: str | None) -> list[int]:
    """``eos_token_id`` of the model's generation_config.json (an int or a list), if it has one."""
    try:
        from transformers import GenerationConfig

        ids = GenerationConfig.from_pretrained(path, revision=revision or "main").eos_token_id
    except (OSError, ValueError, TypeError):
        return []
    if ids is None:
        return []
    return [ids] if isinstance(ids, int) else [i for i in ids if isinstance(i, int)]


_LAZY = frozenset({"torch", "device", "dtype_name", "tokenizer", "config", "pad_id", "eos_ids"})


class HFModel:
    """A transformers causal LM loaded from ``path`` (a local folder or hub id already cached).

    Building one imports neither torch nor transformers: the tokenizer and config load on first
    use of them, the weights on the first call that is not cached, so a fully cached rerun (whose
    identity the response cache remembers, see ``identity_fingerprint``) never imports them.
    """

    capabilities = Capabilities(planned_batches=True, grouped_scores=True, token_counts=True, next_token=True,
                                local_lm=True, identity_memo=True)

    def __init__(
        self,
        path: str,
        *,
        name: str | None = None,
        tokenizer_path: str | None = None,
        revision: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
        max_seq_len: int | None = None,
        eos_token_id: int | Sequence[int] | None = None,
        trust_remote_code: bool = False,
        model_kwargs: dict[str, Any] | None = None,
        tokenizer_kwargs: dict[str, Any] | None = None,
        max_batch_tokens: int | None = None,
        num_threads: int | None = None,
        length_sorted: bool = True,
    ) -> None:
        self._ready = False
        self.path = str(path)
        self.name = name or Path(self.path).name
        self.revision = revision
        self.batch_size = max(1, int(batch_size))
        self.max_seq_len = max_seq_len
        self.max_batch_tokens = int(max_batch_tokens) if max_batch_tokens else None
        self.num_threads = num_threads
        self.length_sorted = length_sorted
        self.stats = ForwardStats()
        if dtype != "auto" and dtype not in _DTYPES:
            raise ModelError("unknown dtype", field="dtype", value=dtype, expected=", ".join(sorted(_DTYPES)))
        tk_path = tokenizer_path or self.path
        for what, where in (("path", self.path), ("tokenizer_path", tk_path)):
            if not Path(where).exists() and _looks_like_local_path(str(where)):
                raise ModelError(f"no model folder at {where}", field=what, value=where,
                                 expected="a folder with config.json and weights, or a Hugging Face model id "
                                          "already in the local cache")
        self.tokenizer_path = tk_path
        self._args: dict[str, Any] = dict(device=device, dtype=dtype, eos_token_id=eos_token_id, trust_remote_code=trust_remote_code,
                          model_kwargs=dict(model_kwargs or {}), tokenizer_kwargs=dict(tokenizer_kwargs or {}))
        self._model: Any = None
        self._load_error: ModelError | None = None
        self._identity: dict[str, Any] | None = None
        self._packed_ok: bool | None = None

    def __getattr__(self, name: str) -> Any:
        # torch, the tokenizer and what depends on them come on first use (see the class docstring)
        if name in _LAZY and not self.__dict__.get("_ready", True):
            self._setup()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _setup(self) -> None:
        import sys

        imported_before = "torch" in sys.modules
        try:
            import torch
            from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ModelError("the transformers backend needs the 'hf' extra: pip install 'promptweave[hf]'") from exc
        from promptweave.models.threads import choose_threads

        a = self._args
        revision, trust = self.revision, a["trust_remote_code"]
        self.torch = torch
        choose_threads(torch, self.num_threads, imported_before=imported_before)
        device = a["device"]
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        dtype = a["dtype"]
        if dtype == "auto":
            dtype = "bfloat16" if self.device.type == "cuda" and torch.cuda.is_bf16_supported() else "float32"
        self.dtype_name = _DTYPES[dtype]
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(
                self.tokenizer_path, revision=revision, trust_remote_code=trust, **a["tokenizer_kwargs"])
            self.config = AutoConfig.from_pretrained(self.path, revision=revision, trust_remote_code=trust)
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot load model or tokenizer: {exc}", field="path", value=self.path) from None
        # the weights load on first use: a rerun whose every call is cached never loads them
        self._load = lambda: AutoModelForCausalLM.from_pretrained(
            self.path, revision=revision, trust_remote_code=trust, dtype=getattr(torch, self.dtype_name),
            **a["model_kwargs"])
        self.pad_id = self.tokenizer.pad_token_id
        if self.pad_id is None:
            self.pad_id = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        eos_token_id = a["eos_token_id"]
        eos: list[int] = []
        if eos_token_id is not None:
            eos = [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id)
        # with no stop words a chat model must still stop at its end of turn (ChatML's <|im_end|>): the
        # generation config's eos ids and the tokenizer's eos, as transformers' generate() and the reference do
        for tid in _generation_eos(self.path, revision) + [self.tokenizer.eos_token_id]:
            if isinstance(tid, int) and tid not in eos:
                eos.append(tid)
        self.eos_ids = eos
        self._ready = True

    @property
    def model(self) -> Any:
        """The weights, loaded on first use (a load failure is raised, and again on every later use)."""
        if self._model is None:
            if self._load_error is not None:
                raise self._load_error
            if not self._ready:  # the weights asked for before anything else: torch and the config first
                self._setup()
            try:
                model = self._load()
            except Exception as exc:  # noqa: BLE001 - torch, safetensors and transformers raise many kinds
                self._load_error = ModelError(f"cannot load the model weights: {exc}", field="path",
                                              value=self.path)
                raise self._load_error from None
            self._model = model.to(self.device).eval()  # type: ignore[arg-type]  # transformers types .to oddly
        return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    # -- identity ------------------------------------------------------------
    def identity_fingerprint(self) -> str | None:
        """A hash of the files and settings ``identity()`` is computed from, read without transformers (the
        response cache keeps the identity under it); None for a hub id."""
        from promptweave.models.hf_identity import identity_fingerprint

        if "_fingerprint" not in self.__dict__:  # once per model: the files are read and hashed
            a = self._args
            settings = {"revision": self.revision, "device": a["device"], "dtype": a["dtype"],
                        "eos_token_id": a["eos_token_id"], "tokenizer_kwargs": a["tokenizer_kwargs"]}
            self._fingerprint = identity_fingerprint(self.path, self.tokenizer_path, settings)
        return self._fingerprint

    def identity(self) -> dict[str, Any]:
        """What makes this model's outputs distinct: path, revision, tokenizer and chat template, dtype."""
        if self._identity is None:
            self._identity = self._compute_identity()
        return dict(self._identity)

    def _compute_identity(self) -> dict[str, Any]:
        tk_dir = Path(self.tokenizer_path)
        tok_hash = _file_hash(tk_dir / "tokenizer.json") or hashlib.sha256(
            json.dumps(sorted(self.tokenizer.get_vocab().items())).encode()).hexdigest()[:16]
        tmpl = getattr(self.tokenizer, "chat_template", None) or ""
        cfg = self.config  # read from config.json, so the identity needs no weights
        return {"backend": "hf", "path": str(Path(self.path).resolve()) if Path(self.path).exists() else self.path,
                "revision": self.revision, "tokenizer": tok_hash,
                "chat_template": hashlib.sha256(str(tmpl).encode()).hexdigest()[:16],
                "config": hashlib.sha256(cfg.to_json_string().encode()).hexdigest()[:16] if cfg else None,
                "dtype": self.dtype_name, "eos": self.eos_ids}

    # -- tokenization -----------------------------------------------------------
    def encode(self, rendered: Rendered) -> list[int]:
        """Token ids of a prompt: a string gets the tokenizer's usual special tokens; segments get none added."""
        return encode_with(self.tokenizer, rendered)

    def count_tokens(self, rendered: Rendered) -> int:
        return len(self.encode(rendered))

    # -- batches ----------------------------------------------------------------------
    def batching_note(self) -> str:
        """How this model's batches are formed, for the plan."""
        if not self.length_sorted:
            return f"file order, {self.batch_size} rows per batch"
        return batching_note(self.batch_size, self.max_batch_tokens)

    def _batches(self, lengths: Sequence[int], *, extra: int = 0, weights: Sequence[int] | None = None
                 ) -> list[list[int]]:
        return length_batches(lengths, self.batch_size, self.max_batch_tokens, extra=extra, weights=weights,
                              sort=self.length_sorted)

    def plan_calls(self, kind: str, items: Sequence[Any], params: GenerationParams | None = None
                   ) -> list[tuple[list[int], Callable[[], list]]]:
        """The model calls that answer ``items`` of one kind (generate / chat / score / next_token).

        Each prompt is tokenized once, here; batches are formed by its exact token count (see
        ``length_batches``) and each call gets its batch's token ids. Every call answers its positions
        into ``items`` in that order, so the caller puts each answer back at its row.
        """
        params = params or GenerationParams()
        if kind in ("generate", "chat"):
            ids = [self._chat_ids(c) for c in items] if kind == "chat" else [self.encode(p) for p in items]
            keep = max(1, self.max_seq_len - params.max_out_len) if self.max_seq_len else None
            lengths = [min(len(x), keep) if keep else len(x) for x in ids]
            return [(b, partial(self.generate, [[ids[i]] for i in b], params))
                    for b in self._batches(lengths, extra=params.max_out_len)]
        if kind == "score":
            seqs = [self._fits(self.encode(p)) for p in items]
            return [(b, partial(self.score_ids, [seqs[i] for i in b]))
                    for b in self._batches([len(x) for x in seqs])]
        if kind == "next_token":
            by_choices: dict[tuple, list[int]] = {}
            for i, (_, tids) in enumerate(items):
                by_choices.setdefault(tuple(tids), []).append(i)
            calls: list[tuple[list[int], Callable[[], list]]] = []
            for tids, where in by_choices.items():
                seqs = [self.encode(items[i][0]) for i in where]
                if self.max_seq_len:
                    seqs = self._cut_left(seqs, self.max_seq_len)
                for b in self._batches([len(x) for x in seqs]):
                    calls.append(([where[i] for i in b], partial(self._next_token_ids, [seqs[i] for i in b], tids)))
            return calls
        raise ValueError(kind)

    def plan_group_calls(self, groups: Sequence[Sequence[Rendered]]) -> list[tuple[list[int], Callable[[], list]]]:
        """Calls scoring groups of prompts that share a prefix (each PPL row's label prompts).

        Each call answers its groups (positions into ``groups``) with one list of per-token log-probs per
        prompt. A group is one packed row (``hf_packed``): its length is the prefix plus every suffix, and
        it counts as its number of prompts against ``batch_size``.
        """
        return self._plan_group_ids(self._encode_groups(groups))

    def _encode_groups(self, groups: Sequence[Sequence[Rendered]]) -> list[list[list[int]]]:
        from promptweave.models.group_tokens import group_ids  # a row's shared text tokenized once

        return [[self._fits(ids) for ids in group_ids(self.tokenizer, g, self.encode)] for g in groups]

    def _plan_group_ids(self, groups: Sequence[Sequence[list[int]]]) -> list[tuple[list[int], Callable[[], list]]]:
        seqs = [[list(x) for x in g] for g in groups]
        prefix = [_common_prefix(g) for g in seqs]
        packable = [i for i, g in enumerate(seqs) if g and prefix[i] >= 1]
        alone = [i for i, g in enumerate(seqs) if g and prefix[i] < 1]
        calls: list[tuple[list[int], Callable[[], list]]] = []
        if packable:
            lengths = [prefix[i] + sum(len(s) - prefix[i] for s in seqs[i]) for i in packable]
            # on CPU a packed row is a forward of its own: nothing padded, and a row's scores are the same bits
            # whatever rows share its call (a Ray shard's or a local run's), as the run's executors promise
            one_each = self.device.type == "cpu"
            batches = [[k] for k in range(len(packable))] if one_each else self._batches(
                lengths, weights=[len(seqs[i]) for i in packable])
            for b in batches:
                where = [packable[k] for k in b]
                calls.append((where, partial(self._score_groups, [seqs[i] for i in where], [prefix[i] for i in where])))
        for i in alone:  # no token in common: each prompt in full
            calls.append(([i], partial(lambda g: [self.score_ids(g)], seqs[i])))
        empty = [i for i, g in enumerate(seqs) if not g]
        if empty:
            calls.append((empty, lambda: [[] for _ in empty]))
        return calls

    def _score_groups(self, groups: list[list[list[int]]], prefix: list[int]) -> list[list[list[float]]]:
        from promptweave.models.hf_packed import pack, score_packed

        if self._packed_ok is None:
            self._packed_ok = self._check_packed(groups[0], prefix[0])
        if not self._packed_ok:
            return self._score_groups_cached(groups, prefix)
        rows = [pack(g, p) for g, p in zip(groups, prefix)]
        return score_packed(self.torch, self._forward_packed, rows, self.pad_id, getattr(self.torch, self.dtype_name))

    def _forward_packed(self, ids: Any, mask: Any, pos: Any) -> Any:
        self.stats.forward_calls += 1
        self.stats.forward_tokens += int(ids.numel())
        dev = self.device
        with self.torch.no_grad():
            return self.model(input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=pos.to(dev),
                              use_cache=False).logits

    def _check_packed(self, group: list[list[int]], p: int) -> bool:
        """Whether this architecture takes a 4-D mask and position ids as packing needs: a small packed row
        against the same prompts scored one by one (otherwise groups go through the KV-cache path)."""
        from promptweave.models.hf_packed import pack, score_packed

        head = group[0][:min(p, 6)]
        probe = [head + s[p:p + 3] for s in group[:3]]
        calls, tokens = self.stats.forward_calls, self.stats.forward_tokens
        try:
            got = score_packed(self.torch, self._forward_packed, [pack(probe, len(head))], self.pad_id,
                               getattr(self.torch, self.dtype_name))[0]
            want = [self._score_batch([s])[0] for s in probe]
        except Exception:  # noqa: BLE001 - an architecture that refuses the mask: use the KV-cache path
            return False
        finally:
            self.stats.forward_calls, self.stats.forward_tokens = calls, tokens  # the probe is not the work's
        tol = 1e-3 if self.dtype_name == "float32" else 0.1
        return all(len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b)) for a, b in zip(got, want))

    def _score_groups_cached(self, groups: list[list[list[int]]], prefix: list[int]) -> list[list[list[float]]]:
        out: list[Any] = [None] * len(groups)
        self._score_shared_chunk([(k, p, g) for k, (g, p) in enumerate(zip(groups, prefix))], out)
        return out

    # -- generation ---------------------------------------------------------------
    def generate(self, prompts: Sequence[Rendered], params: GenerationParams) -> list[str]:
        """Continue each prompt; greedy when ``temperature == 0``, sampled otherwise (batched by length)."""
        seqs = [self.encode(p) for p in prompts]
        if self.max_seq_len:
            seqs = self._cut_left(seqs, max(1, self.max_seq_len - params.max_out_len))
        if params.seed is not None:
            self.torch.manual_seed(params.seed)
        out: list[str] = [""] * len(seqs)
        for b in self._batches([len(x) for x in seqs], extra=params.max_out_len):
            for i, text in zip(b, self._generate_ids([seqs[i] for i in b], params)):
                out[i] = text
        return out

    def _generate_ids(self, chunk: list[list[int]], params: GenerationParams) -> list[str]:
        torch = self.torch
        input_ids, mask = self._pad(chunk, left=True)
        kw: dict[str, Any] = {"max_new_tokens": params.max_out_len, "pad_token_id": self.pad_id,
                              "eos_token_id": self.eos_ids or None}
        if params.temperature and params.temperature > 0:
            kw.update(do_sample=True, temperature=params.temperature)
            if params.top_p is not None:
                kw["top_p"] = params.top_p
        else:
            kw.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if params.stop:
            kw.update(stop_strings=list(params.stop), tokenizer=self.tokenizer)
        kw.update({k: v for k, v in params.extra.items() if k not in ("eos_token_id",)})
        with torch.no_grad():
            gen = self._run_generate(input_ids.to(self.device), mask.to(self.device), kw, params.max_out_len)
        self.stats.forward_calls += 1
        self.stats.forward_tokens += int(input_ids.numel())  # the prefill's positions, padding included
        eos = set(self.eos_ids)
        out = []
        for row in gen[:, input_ids.shape[1]:].tolist():
            # generate() keeps the eos token it stopped on; a meta template's eos may be an ordinary token
            cut = next((i for i, t in enumerate(row) if t in eos), len(row))
            text = self.tokenizer.decode(row[:cut], skip_special_tokens=True)
            out.append(cut_at_stop(str(text), params.stop))
        return out

    _reserve: bool | None = None  # None: not tried yet; False: this model or transformers refused the cache

    def _run_generate(self, input_ids: Any, mask: Any, kw: dict[str, Any], room: int) -> Any:
        """``model.generate``; on CPU with a KV cache that writes each step in place (``hf_reserved_cache``: the
        default cache copies itself at every step), the default cache where that cannot be used."""
        model = self.model
        if self.device.type == "cpu" and self._reserve is not False:
            from promptweave.models.hf_reserved_cache import cache_argument, reserved_cache

            cache = reserved_cache(self.torch, model, room)
            if cache is not None:
                try:
                    out = model.generate(input_ids=input_ids, attention_mask=mask, **{cache_argument(model): cache},
                                         **kw)
                except (TypeError, ValueError, AttributeError, NotImplementedError):
                    if self._reserve:  # it worked before: this error is the request's own
                        raise
                    self._reserve = False  # refused (an older API, a model with its own cache): the default below
                else:
                    self._reserve = True
                    return out
            else:
                self._reserve = False
        return model.generate(input_ids=input_ids, attention_mask=mask, **kw)

    def _chat_ids(self, conv: Sequence[dict]) -> list[int]:
        if not getattr(self.tokenizer, "chat_template", None):
            raise ModelError("this tokenizer has no chat_template, so it cannot take message lists; give the "
                             "model a meta template instead", field="path", value=self.path)
        from promptweave.models.openai_compat import openai_message  # renderer roles → chat roles
        from promptweave.render.chat_template import chat_template_ids

        return chat_template_ids(self.tokenizer, [openai_message(m) for m in conv])

    def prompt_ids(self, prompt: Any) -> list[int] | None:
        """The token ids this model receives for a prompt as the predictions record it (a text, segments, or chat
        messages through the tokenizer's chat template); None for messages it cannot take (no chat template)."""
        if isinstance(prompt, list) and prompt and all(isinstance(m, dict) for m in prompt):
            if not getattr(self.tokenizer, "chat_template", None):
                return None
            return self._chat_ids(prompt)
        return self.encode(prompt)

    def truncation(self, prompt: Any, reserve: int) -> dict[str, Any] | None:
        """How :meth:`generate` (``reserve=max_out_len``) or :meth:`next_token_logprobs` (``reserve=0``) cuts this
        prompt to fit ``max_seq_len``, or None when it fits: the side, the token counts before and after, and
        where the kept part starts (``dropped_chars`` of a text prompt; ``sent_text``, the kept tokens decoded,
        of chat messages or token-id segments)."""
        if not self.max_seq_len:
            return None
        keep = max(1, self.max_seq_len - reserve)
        ids = self.prompt_ids(prompt)
        if ids is None or len(ids) <= keep:
            return None
        dropped = len(ids) - keep
        out: dict[str, Any] = {"side": "left", "tokens_before": len(ids), "tokens_after": keep,
                               "max_seq_len": self.max_seq_len, "reserved": reserve}
        if isinstance(prompt, str):
            out["dropped_chars"] = self._char_at(prompt, dropped)
        else:
            out["sent_text"] = self.tokenizer.decode(ids[-keep:])
        return out

    def _char_at(self, text: str, token: int) -> int:
        """Where token ``token`` of ``text`` (as :meth:`encode` tokenizes it) starts, in characters."""
        try:
            offsets = self.tokenizer(text, return_offsets_mapping=True)["offset_mapping"]
        except (NotImplementedError, ValueError, TypeError, KeyError):  # a slow tokenizer: decode what was dropped
            return min(len(text), len(self.tokenizer.decode(self.encode(text)[:token], skip_special_tokens=True)))
        for a, b in offsets[token:]:
            if b > a:  # the first kept token with text (special tokens have none)
                return int(a)
        return len(text)

    def chat(self, conversations: Sequence[Sequence[dict]], params: GenerationParams) -> list[str]:
        """Answer message lists through the tokenizer's own chat template."""
        return self.generate([[self._chat_ids(conv)] for conv in conversations], params)

    # -- scoring -------------------------------------------------------------------
    def forward(self, input_ids: Any, attention_mask: Any) -> Any:
        """The model's outputs (``.logits``) for a batch of token ids, without gradients (a local_lm capability)."""
        return self._forward(input_ids, attention_mask)

    def _forward(self, input_ids: Any, attention_mask: Any, past: Any = None) -> Any:
        self.stats.forward_calls += 1
        self.stats.forward_tokens += int(input_ids.numel())
        with self.torch.no_grad():
            return self.model(input_ids=input_ids.to(self.device), attention_mask=attention_mask.to(self.device),
                              use_cache=past is not None or self._want_cache, **self._past(past))

    _want_cache = False

    def _past(self, past: Any) -> dict[str, Any]:
        """A cache argument under the name this transformers takes (``cache`` in 5, ``past_key_values`` before)."""
        if past is None:
            return {}
        if "_cache_arg" not in self.__dict__:
            from promptweave.models.hf_reserved_cache import cache_argument

            self._cache_arg = cache_argument(self.model)
        return {self._cache_arg: past}

    def _pad(self, seqs: Sequence[Sequence[int]], *, left: bool = False) -> tuple[Any, Any]:
        """A padded id batch and its attention mask (left padding for generation, right for scoring)."""
        torch = self.torch
        width = max(len(q) for q in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for i, q in enumerate(seqs):
            span = slice(width - len(q), width) if left else slice(0, len(q))
            ids[i, span] = torch.tensor(list(q), dtype=torch.long)
            mask[i, span] = 1
        return ids, mask

    def _score_batch(self, seqs: list[list[int]]) -> list[list[float]]:
        torch = self.torch
        ids, mask = self._pad(seqs)
        logits = self._forward(ids, mask).logits.float()
        lps = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:].to(self.device).unsqueeze(-1))
        lps = lps.squeeze(-1).cpu()
        return [lps[i, :len(s) - 1].tolist() for i, s in enumerate(seqs)]

    def score_ids(self, seqs: Sequence[list[int]]) -> list[list[float]]:
        """Per-token log-probs (tokens 2..n) of each sequence, one full forward per sequence (batched)."""
        out: list[Any] = [None] * len(seqs)
        for b in self._batches([len(s) for s in seqs]):
            for i, lps in zip(b, self._score_batch([list(seqs[i]) for i in b])):
                out[i] = lps
        return out

    def score_group_ids(self, group: Sequence[list[int]]) -> list[list[float]]:
        """Per-token log-probs of sequences sharing a prefix: the prefix is run once, suffixes reuse its KV cache."""
        return self.score_groups_ids([group])[0]

    def score_groups_ids(self, groups: Sequence[Sequence[list[int]]]) -> list[list[list[float]]]:
        """Score several groups (the label prompts of several PPL rows) in batches.

        Each group is one packed row (``hf_packed``): its common token prefix runs once and every
        suffix after it, with positions continuing from the prefix. Equal, up to float rounding, to
        scoring each sequence in full. Architectures that do not take a packed row's 4-D mask go
        through the KV cache instead (``_score_shared_chunk``).
        """
        out: list[Any] = [None] * len(groups)
        for where, run in self._plan_group_ids(groups):
            for gi, got in zip(where, run()):
                out[gi] = got
        return out

    def _score_shared_chunk(self, chunk: list[tuple[int, int, list[list[int]]]], out: list[Any]) -> None:
        torch = self.torch
        dev = self.device
        pmax = max(p for _, p, _ in chunk)
        ids, mask = self._pad([seqs[0][:p] for _, p, seqs in chunk])
        self._want_cache = True
        try:
            out_p = self._forward(ids, mask)
        finally:
            self._want_cache = False
        prefix_lps: list[list[float]] = []
        last: list[Any] = []
        for b, (_, p, _) in enumerate(chunk):
            lp = torch.log_softmax(out_p.logits[b, :p].float(), -1)  # one row at a time keeps memory at p x vocab
            prefix_lps.append(lp[:-1].gather(-1, ids[b, 1:p].to(dev).unsqueeze(-1)).squeeze(-1).cpu().tolist())
            last.append(lp[-1].cpu())
        del out_p.logits
        flat = [(b, s[p:]) for b, (_, p, seqs) in enumerate(chunk) for s in seqs]
        smax = max(len(suf) for _, suf in flat)
        sids = torch.full((len(flat), smax), self.pad_id, dtype=torch.long)
        smask = torch.zeros((len(flat), pmax + smax), dtype=torch.long)
        pos = torch.zeros((len(flat), smax), dtype=torch.long)
        for k, (b, suf) in enumerate(flat):
            p = chunk[b][1]
            sids[k, :len(suf)] = torch.tensor(suf, dtype=torch.long)
            smask[k, :p] = 1  # the padded tail of a shorter prefix stays masked out
            smask[k, pmax:pmax + len(suf)] = 1
            pos[k] = torch.arange(p, p + smax)
        past = out_p.past_key_values
        past.batch_select_indices(torch.tensor([b for b, _ in flat], device=dev))
        self.stats.forward_calls += 1
        self.stats.forward_tokens += int(sids.numel())
        with torch.no_grad():
            logits_s = self.model(input_ids=sids.to(dev), attention_mask=smask.to(dev), position_ids=pos.to(dev),
                                  use_cache=True, **self._past(past)).logits
        k = 0
        for b, (gi, p, seqs) in enumerate(chunk):
            rows = []
            for s in seqs:
                suf = flat[k][1]
                tail = torch.log_softmax(logits_s[k, :len(suf) - 1].float(), -1).gather(
                    -1, sids[k, 1:len(suf)].to(dev).unsqueeze(-1)).squeeze(-1).cpu().tolist()
                rows.append(prefix_lps[b] + [float(last[b][suf[0]])] + tail)
                k += 1
            out[gi] = rows

    def token_logprobs(self, prompts: Sequence[Rendered], shared_prefix: bool = True) -> list[list[float]]:
        """Per-token log-probs of each prompt; with ``shared_prefix`` the prompts are scored as one group."""
        seqs = [self._fits(self.encode(p)) for p in prompts]
        return self.score_group_ids(seqs) if shared_prefix else self.score_ids(seqs)

    def token_logprobs_groups(self, groups: Sequence[Sequence[Rendered]]) -> list[list[list[float]]]:
        """Per-token log-probs for several groups of prompts, each group scored from its shared prefix."""
        return self.score_groups_ids(self._encode_groups(groups))

    _warned_cut = False
    warn_cuts = True  # a run records each cut row and warns per task instead (run/truncation.py)

    def _cut_left(self, seqs: list[list[int]], keep: int) -> list[list[int]]:
        """Keep the last ``keep`` tokens (the question sits at the end); counted in ``stats``, warned once."""
        n = sum(len(s) > keep for s in seqs)
        if not n:
            return seqs
        self.stats.truncated_prompts += n
        if self.warn_cuts and not self._warned_cut:
            self._warned_cut = True
            warnings.warn(f"{self.name}: {n} prompt(s) longer than {keep} tokens (max_seq_len {self.max_seq_len} "
                          "less the room to generate) are cut from the left; set max_seq_len on the inferencer "
                          "or model config so in-context examples are dropped instead "
                          "(stats.truncated_prompts counts every cut prompt)", PromptweaveWarning, stacklevel=3)
        return [s[-keep:] for s in seqs]

    def _fits(self, ids: list[int]) -> list[int]:
        # a scored prompt is never cut silently: that would change what the label is conditioned on
        if self.max_seq_len and len(ids) > self.max_seq_len:
            raise ModelError(f"a prompt to score has {len(ids)} tokens, more than max_seq_len={self.max_seq_len}; "
                             "set max_seq_len on the inferencer or model config so in-context examples are dropped to fit "
                             "(promptweave.engine.fit.ShotFitter), or raise it",
                             field="max_seq_len", value=self.max_seq_len)
        return ids

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        """Sum of log-probs of each continuation given its context (context tokenized as a prompt)."""
        out: list[float] = []
        for context, continuation in requests:
            ctx = self.encode(context)
            cont = list(self.tokenizer(continuation, add_special_tokens=False)["input_ids"])
            if not cont:
                out.append(0.0)
                continue
            [lps] = self.score_ids([ctx + cont])
            out.append(float(sum(lps[-len(cont):])))
        return out

    def next_token_logprobs(self, prompts: Sequence[Rendered], token_ids: Sequence[int]) -> list[list[float]]:
        """Log-probabilities of ``token_ids`` as the next token after each prompt (for CLP)."""
        seqs = [self.encode(p) for p in prompts]
        if self.max_seq_len:
            seqs = self._cut_left(seqs, self.max_seq_len)
        out: list[list[float]] = []
        for start in range(0, len(seqs), self.batch_size):
            out.extend(self._next_token_ids(seqs[start:start + self.batch_size], token_ids))
        return out

    def _next_token_ids(self, chunk: list[list[int]], token_ids: Sequence[int]) -> list[list[float]]:
        torch = self.torch
        idx = torch.tensor(list(token_ids), dtype=torch.long)
        ids, mask = self._pad(chunk)
        logits = self._forward(ids, mask).logits.float()
        out = []
        for i, s in enumerate(chunk):
            lp = torch.log_softmax(logits[i, len(s) - 1], -1).cpu()
            out.append(lp[idx].tolist())
        return out


def _common_prefix(seqs: Sequence[list[int]]) -> int:
    """Length of the common token prefix, leaving every sequence at least one token of its own."""
    if not seqs:
        return 0
    shortest = min(len(s) for s in seqs)
    p = 0
    first = seqs[0]
    while p < shortest and all(s[p] == first[p] for s in seqs):
        p += 1
    return min(p, shortest - 1)


def _looks_like_local_path(path: str) -> bool:
    """A hub id is ``name`` or ``org/name``; anything else that does not exist is a missing folder."""
    return path.startswith((".", "/", "~")) or path.count("/") > 1 or "\\" in path
