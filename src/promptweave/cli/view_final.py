"""What ``view`` needs beyond the builder to show the *final* prompt of a model.

- Models that send their prompts through their tokenizer's chat template
  (``HuggingFacewithChatTemplate``-style types, or ``chat_template=`` in the model config)
  are shown as the text that template produces (files only, no weights).
- With ``max_seq_len`` and a local tokenizer, rows are fitted exactly as ``run`` fits them
  (the same budget, counter and :class:`~promptweave.engine.fit.ShotFitter`).
- Token ids per segment, and side-by-side comparison of two renderings.
"""
from __future__ import annotations

import difflib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptweave.errors import PromptweaveError, PromptweaveWarning
from promptweave.render.chat_template import (
    ChatTemplate,
    check_tokenizer_folder,
    load_chat_template,
    render_with_chat_template,
    segments_of,
)

_CHAT_TEMPLATE_TYPES = ("HuggingFacewithChatTemplate", "VLLMwithChatTemplate", "HuggingFaceChatTemplate")
_DEFAULT_CHAT_META = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "SYSTEM", "api_role": "HUMAN"},
                               {"role": "BOT", "api_role": "BOT", "generate": True}]}
_ROLE_GUESS = {"human": "HUMAN", "user": "HUMAN", "bot": "BOT", "assistant": "BOT", "gpt": "BOT", "system": "SYSTEM"}


def _warn(msg: str) -> None:
    warnings.warn(msg, PromptweaveWarning, stacklevel=3)


@dataclass
class FinalModel:
    """A model as ``view`` shows it: its spec, where its tokenizer is, and its chat template."""

    spec: Any
    tokenizer_path: str | None = None
    chat: ChatTemplate | None = None
    uses_chat_template: bool = False
    _tokenizer: Any = field(default=None, repr=False)
    _api_meta: Any = field(default=None, repr=False)
    _counter: Any = field(default=False, repr=False)  # False: not loaded yet; None: no tokenizer

    # ------------------------------------------------------------------ final text
    def final_text(self, rec: Any) -> str | None:
        """The text a chat-template model receives for this record (None for other models)."""
        if not self.uses_chat_template or self.chat is None:
            return None
        return render_with_chat_template(self.messages(rec), self.chat, add_generation_prompt=rec.mode == "gen")

    def messages(self, rec: Any) -> Any:
        """The record as chat messages: its rendering for a chat model, via the role names for a text model."""
        if isinstance(rec.rendered, list) and all(isinstance(m, dict) for m in rec.rendered):
            return rec.rendered
        from promptweave.prompt.dialogue import Dialogue
        from promptweave.render.chat import render_chat

        if isinstance(rec.prompt, Dialogue):
            return render_chat(rec.prompt, self.api_meta(), rec.mode)
        text = rec.rendered if isinstance(rec.rendered, str) else "".join(
            s for s in rec.rendered if isinstance(s, str))
        return [{"role": "user", "content": text}]

    def api_meta(self) -> Any:
        """The model's meta template roles as chat roles (begin/end dropped: the chat template supplies them).

        Without a meta template: HUMAN and SYSTEM as user, BOT as assistant, as OpenCompass's
        chat-template models do by default.
        """
        if self._api_meta is None:
            from promptweave.render.meta import MetaTemplate, RoleSpec

            meta = self.spec.meta
            if meta is None:
                self._api_meta = MetaTemplate.from_config(_DEFAULT_CHAT_META, kind="api")
                return self._api_meta

            def role(r: Any) -> dict:
                api = r.api_role or _ROLE_GUESS.get(r.role.lower(), "HUMAN")
                return {"role": r.role, "api_role": api, "generate": r.generate}

            self._api_meta = MetaTemplate.from_config(
                {"round": [role(r) for r in meta.round if isinstance(r, RoleSpec)],
                 "reserved_roles": [role(r) for r in meta.reserved]}, kind="api")
        return self._api_meta

    def meta_vs_chat(self, rec: Any) -> tuple[Any, str] | None:
        """(the meta template's rendering, the tokenizer chat template's) for one record, when the model has both."""
        if self.chat is None or self.spec.meta is None:
            return None
        try:
            chat_text = render_with_chat_template(self.messages(rec), self.chat,
                                                  add_generation_prompt=rec.mode == "gen")
        except PromptweaveError as exc:
            _warn(f"model {self.spec.abbr}: its chat template cannot render row {rec.index}: {exc}")
            return None
        return rec.rendered, chat_text

    # ------------------------------------------------------------------ tokens
    def tokenizer(self) -> Any:
        """The model's tokenizer (files only), or None when there is none locally or transformers is missing."""
        if self._tokenizer is None and self.tokenizer_path:
            try:
                from transformers import AutoTokenizer
            except ImportError:
                _warn("--tokens needs transformers: pip install 'promptweave[hf]'")
                self.tokenizer_path = None
                return None
            try:
                # the tokenizer folder is untrusted: no file in it may lead outside it (checked before transformers)
                self._tokenizer = AutoTokenizer.from_pretrained(str(check_tokenizer_folder(self.tokenizer_path)))
            except (OSError, ValueError, PromptweaveError) as exc:
                _warn(f"model {self.spec.abbr}: cannot load its tokenizer from {self.tokenizer_path}: {exc}")
                self.tokenizer_path = None
        return self._tokenizer

    def token_segments(self, pieces: Sequence[tuple[Any, str]], *, add_special: bool) -> list[dict[str, Any]] | None:
        """Token ids per (piece, tag), from one encoding of the whole text (ids attributed by character offset)."""
        tok = self.tokenizer()
        if tok is None:
            return None
        texts = [p for p, _ in pieces if isinstance(p, str)]
        text = "".join(texts)
        enc = tok(text, add_special_tokens=add_special, return_offsets_mapping=True)
        ids, offsets = list(enc["input_ids"]), list(enc["offset_mapping"])
        out: list[dict[str, Any]] = []
        bounds, pos = [], 0
        for piece, tag in pieces:
            if isinstance(piece, str):
                bounds.append((pos, pos + len(piece)))
                pos += len(piece)
                out.append({"tag": tag, "text": piece, "ids": []})
            else:  # token ids given in the meta template reach the model as they are
                bounds.append(None)
                out.append({"tag": "ids", "text": "", "ids": [int(i) for seg in piece for i in
                                                                (seg if isinstance(seg, (list, tuple)) else [seg])
                                                                if isinstance(i, int)]})
        special = {"tag": "special", "text": "", "ids": []}
        for tid, (a, b) in zip(ids, offsets):
            if a == b:
                special["ids"].append(tid)
                continue
            for k, bd in enumerate(bounds):
                if bd is not None and bd[0] <= a < bd[1]:
                    out[k]["ids"].append(tid)
                    break
        segs = ([special] if special["ids"] else []) + [s for s in out if s["text"] or s["ids"]]
        for s in segs:
            s["count"] = len(s["ids"])
        return segs


def final_model(spec: Any) -> FinalModel:
    """How ``view`` renders this model's final prompt; tokenizers are found, never downloaded."""
    from promptweave.models.factory import HF_TYPES, VLLM_TYPES, cfg_get, type_name

    cfg = spec.config
    tname = type_name(cfg)
    path = cfg_get(cfg, "tokenizer_path") or (cfg_get(cfg, "path") if tname in HF_TYPES or tname in VLLM_TYPES
                                              else None)
    local = str(path) if path and Path(str(path)).expanduser().is_dir() else None
    inline = cfg_get(cfg, "chat_template")
    uses = tname in _CHAT_TEMPLATE_TYPES or tname.endswith("withChatTemplate") or bool(inline)
    fm = FinalModel(spec, local, None, uses)
    if local:
        try:
            fm.chat = load_chat_template(local)
        except PromptweaveError as exc:
            _warn(f"model {spec.abbr}: {exc}")
    if isinstance(inline, str):  # the config's own template, with the tokenizer's special tokens if there is one
        fm.chat = ChatTemplate(inline, dict(fm.chat.special_tokens) if fm.chat else {}, f"{spec.file}: chat_template")
    if uses and fm.chat is None:
        _warn(f"model {spec.abbr} renders its prompts with its tokenizer's chat template, but "
              f"{'no tokenizer folder is at ' + repr(str(path)) if path and not local else 'its tokenizer has none'}"
              "; showing the messages instead (set tokenizer_path to a local copy of the tokenizer files)")
    return fm


def fitter_for(builder: Any, fm: FinalModel, mode: str, indices: Sequence[int]) -> Any:
    """A ShotFitter set up exactly as ``run`` sets it up for this dataset × model, or None when run would not fit."""
    from promptweave.engine.fit import ShotFitter
    from promptweave.models.factory import (
        cfg_get,
        generation_params,
        load_token_counter,
    )
    from promptweave.run.plan import infer_mode, prompt_budget

    settings = builder.dataset.inferencer.settings
    mcfg = fm.spec.config
    try:  # the run's mode decides what the budget keeps free (a CLP run builds gen prompts, but reserves nothing)
        run_mode = infer_mode(builder.dataset.inferencer.type)
    except PromptweaveError:
        run_mode = mode
    if ("gen" if run_mode == "clp" else run_mode) == mode:
        mode = run_mode
    params = generation_params(mcfg, max_out_len=settings.get("max_out_len"), stop=settings.get("stopping_criteria"))
    budget = prompt_budget(settings.get("max_seq_len"), cfg_get(mcfg, "max_seq_len"), mode=mode,
                           max_out_len=params.max_out_len)
    if budget is None or not any(builder.ids_for(i) for i in indices):
        return None
    if fm._counter is False:  # loaded once per model, as the run does
        try:
            fm._counter = load_token_counter(mcfg)
        except PromptweaveError as exc:
            fm._counter = None
            _warn(f"model {fm.spec.abbr}: prompts shown before fitting into max_seq_len: {exc}")
            return None
    count = fm._counter
    if count is None:
        _warn(f"model {fm.spec.abbr}: no tokenizer to count prompt tokens, so prompts are shown before fitting into "
              f"max_seq_len={budget} (run does the same); set tokenizer_path to fit them")
        return None
    return ShotFitter(builder, count, budget)


def as_lines(rendered: Any) -> str:
    """A rendering as one text: itself, the joined segments, or the messages one ``[role]`` block each."""
    if isinstance(rendered, str):
        return rendered
    if isinstance(rendered, list) and all(isinstance(m, dict) for m in rendered):
        out = []
        for m in rendered:
            body = m.get("prompt", m.get("content", ""))
            out.append(f"[{m.get('role')}] " + (body if isinstance(body, str) else str(body)))
        return "\n".join(out)
    if isinstance(rendered, (list, tuple)):
        return "".join(s if isinstance(s, str) else f"<ids {list(s)}>" for s in rendered)
    return str(rendered)


def side_by_side(a: str, b: str) -> list[tuple[str, str, str]]:
    """Rows (marker, left, right): ``' '`` same, ``'~'`` changed, ``'-'`` only left, ``'+'`` only right."""
    la, lb = a.split("\n"), b.split("\n")
    rows: list[tuple[str, str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes():
        if op == "equal":
            rows += [(" ", x, x) for x in la[i1:i2]]
        elif op == "replace":
            n = max(i2 - i1, j2 - j1)
            for k in range(n):
                left = la[i1 + k] if i1 + k < i2 else None
                right = lb[j1 + k] if j1 + k < j2 else None
                mark = "~" if left is not None and right is not None else ("-" if right is None else "+")
                rows.append((mark, left or "", right or ""))
        elif op == "delete":
            rows += [("-", x, "") for x in la[i1:i2]]
        else:
            rows += [("+", "", x) for x in lb[j1:j2]]
    return rows


__all__ = ["FinalModel", "as_lines", "final_model", "fitter_for", "segments_of", "side_by_side"]
