"""Rendering chat messages through a Hugging Face tokenizer's ``chat_template`` (no model weights).

The template is Jinja from the model's repository, so it is untrusted: it runs in one
cached :class:`~promptweave.render.jinja_budget.BudgetedEnvironment` (jinja2's
``ImmutableSandboxedEnvironment`` inside step, size, depth and integer budgets, no
``include``/``import``/``extends``), set up the way
transformers sets up its own (``trim_blocks``/``lstrip_blocks``, loop controls, a
``{% generation %}`` block, ``raise_exception``, ``strftime_now``, a ``tojson`` that does
not HTML-escape, a ``dict`` and a ``namespace`` without dunder access), so a template
renders here exactly as ``tokenizer.apply_chat_template(..., tokenize=False)`` renders it.

Only the tokenizer files are read (``tokenizer_config.json``, ``chat_template.jinja``,
``chat_template.json``, ``special_tokens_map.json``), and only inside the tokenizer folder: a
symlink that resolves elsewhere is refused, except the Hugging Face cache's own links from
``snapshots/<rev>/`` into the same repository's ``blobs/``. transformers is not needed.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from promptweave.errors import ChatTemplateError

# the named special tokens transformers passes to every template (its ``special_tokens_map``)
SPECIAL_TOKEN_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_ROLES = {"HUMAN": "user", "BOT": "assistant", "SYSTEM": "system"}


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template and the special-token values it is rendered with."""

    source: str
    special_tokens: Mapping[str, str] = field(default_factory=dict)
    origin: str = "<template>"  # the file it came from, for errors


def _token_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Mapping):  # AddedToken as saved: {"content": ..., "lstrip": ...}
        value = value.get("content")
        return None if value is None else str(value)
    return str(value)


def _pick_template(value: Any, origin: str) -> str | None:
    """A template string from the saved forms: a string, or a list of ``{name, template}`` (``default`` wins)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        value = [{"name": k, "template": v} for k, v in value.items()]
    if isinstance(value, list):
        named = {str(t.get("name")): t.get("template") for t in value if isinstance(t, Mapping)}
        if "default" in named:
            return named["default"]
        raise ChatTemplateError("the tokenizer has several chat templates and none is named 'default'",
                                file=origin, field="chat_template", value=sorted(named),
                                expected="a template named 'default'")
    raise ChatTemplateError("chat_template must be a string or a list of named templates", file=origin,
                            field="chat_template", value=type(value).__name__)


MAX_TOKENIZER_FILE_BYTES = 64_000_000  # the largest real tokenizer_config.json files are a few MB


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def tokenizer_file(root: Path, name: str) -> Path | None:
    """``root/name`` if it is a regular file inside the tokenizer folder (None when absent), else a typed refusal.

    ``root`` is the resolved folder. A file may be a symlink only into that folder or, for a
    Hugging Face cache snapshot (``<repo>/snapshots/<rev>/``), into the same repository's ``blobs/``.
    """
    path = root / name
    if not path.is_symlink() and not path.exists():
        return None
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # a dangling link or a link loop
        raise ChatTemplateError(f"the tokenizer file is a link that resolves nowhere: {exc}", file=str(path),
                                field="tokenizer_path", expected="a regular file in the tokenizer folder") from None
    blobs = root.parent.parent / "blobs" if root.parent.name == "snapshots" else None
    if not (_inside(real, root) or (blobs is not None and _inside(real, blobs))):
        raise ChatTemplateError("the tokenizer file is a link to a file outside the tokenizer folder; tokenizer "
                                "files are read only inside it (Hugging Face cache links into the same "
                                "repository's blobs/ excepted)", file=str(path), field="tokenizer_path",
                                expected="the tokenizer's own files, copied into the folder")
    if not real.is_file():
        raise ChatTemplateError("the tokenizer file is not a regular file", file=str(path), field="tokenizer_path")
    size = real.stat().st_size
    if size > MAX_TOKENIZER_FILE_BYTES:
        raise ChatTemplateError(f"the tokenizer file is {size} bytes (at most {MAX_TOKENIZER_FILE_BYTES} are read)",
                                file=str(path), field="tokenizer_path")
    return real


def check_tokenizer_folder(folder: str | Path) -> Path:
    """The resolved tokenizer folder, once every file in it passed :func:`tokenizer_file` (before transformers
    reads any of them)."""
    root = _resolved_folder(folder)
    try:
        names = sorted(p.name for p in root.iterdir())
    except OSError as exc:
        raise ChatTemplateError(f"cannot list the tokenizer folder: {exc.strerror or exc}", file=str(root),
                                field="tokenizer_path") from None
    for name in names:
        if not (root / name).is_dir() or (root / name).is_symlink():
            tokenizer_file(root, name)
    return root


def _resolved_folder(folder: str | Path) -> Path:
    try:
        root = Path(folder).expanduser().resolve(strict=True)
    except (OSError, RuntimeError):
        root = None
    if root is None or not root.is_dir():
        raise ChatTemplateError("no tokenizer folder here", file=str(folder), field="tokenizer_path",
                                expected="a local folder with tokenizer_config.json (the model's tokenizer files)")
    return root


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ChatTemplateError(f"cannot read the tokenizer file: {exc}", file=str(path),
                                expected="UTF-8 text") from None


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(_read_text(path))
    except ValueError as exc:
        raise ChatTemplateError(f"cannot read the tokenizer file: {exc}", file=str(path),
                                expected="valid JSON") from None
    except RecursionError:
        raise ChatTemplateError("the tokenizer file nests too deeply to read", file=str(path),
                                expected="valid JSON") from None
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=64)
def _load_folder(folder: str) -> ChatTemplate | None:
    root = _resolved_folder(folder)
    config_path = tokenizer_file(root, "tokenizer_config.json")
    config = _read_json(config_path) if config_path else {}
    source, origin = None, str(root / "tokenizer_config.json")
    # newer saves keep the template in its own file; it takes precedence, as in transformers
    jinja_file, json_file = tokenizer_file(root, "chat_template.jinja"), tokenizer_file(root, "chat_template.json")
    if jinja_file:
        origin = str(root / "chat_template.jinja")
        source = _read_text(jinja_file)
    elif json_file:
        origin = str(root / "chat_template.json")
        source = _pick_template(_read_json(json_file).get("chat_template"), origin)
    else:
        source = _pick_template(config.get("chat_template"), origin)
    if source is None:
        return None
    special: dict[str, str] = {}
    stm = tokenizer_file(root, "special_tokens_map.json")
    for src in ((_read_json(stm) if stm else {}), config):
        for name in SPECIAL_TOKEN_NAMES:
            text = _token_text(src.get(name))
            if text is not None:
                special[name] = text
    return ChatTemplate(source, special, origin)


def load_chat_template(tokenizer_path_or_obj: Any) -> ChatTemplate | None:
    """The chat template of a tokenizer folder, a loaded tokenizer, or a :class:`ChatTemplate`; None if it has none."""
    obj = tokenizer_path_or_obj
    if isinstance(obj, ChatTemplate):
        return obj
    if isinstance(obj, (str, Path)):
        return _load_folder(str(_resolved_folder(obj)))
    tpl = getattr(obj, "chat_template", None)
    if tpl is None:
        return None
    source = _pick_template(tpl, type(obj).__name__)
    special = {k: str(v) for k, v in dict(getattr(obj, "special_tokens_map", {}) or {}).items()
               if k in SPECIAL_TOKEN_NAMES and v is not None}
    return ChatTemplate(source, special, getattr(obj, "name_or_path", "") or type(obj).__name__)


# ---------------------------------------------------------------------------- the sandbox
class _TemplateDict:
    """``dict(...)`` inside templates, without exposing the type itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


@lru_cache(maxsize=1)
def _environment() -> Any:
    import jinja2
    import jinja2.ext

    from promptweave.render.jinja_budget import BudgetedEnvironment

    class Generation(jinja2.ext.Extension):
        # ``{% generation %}...{% endgeneration %}`` marks assistant text for training masks; it renders its body
        tags: ClassVar[set[str]] = {"generation"}

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller: Any) -> str:
            return caller()

    class Namespace(jinja2.utils.Namespace):
        # underscore names could reach interpreter internals through attribute lookups
        def __init__(*args: Any, **kwargs: Any) -> None:
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                Namespace._check(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            Namespace._check(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check(name: Any) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(f"a namespace attribute may not start with '_': {name!r}")

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    env = BudgetedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols])
    env.add_filter("tojson", tojson)
    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now, dict=_TemplateDict(),
                       namespace=Namespace)
    return env


@lru_cache(maxsize=64)
def _compiled(source: str, origin: str) -> Any:
    import jinja2

    from promptweave.render.jinja_budget import TemplateRefused

    try:
        return _environment().from_string(source)
    except TemplateRefused as exc:
        raise ChatTemplateError(f"the chat template is refused: {exc.message}", file=f"{origin}:{exc.lineno}",
                                field="chat_template", expected="the template the model's repository ships") from None
    except jinja2.TemplateSyntaxError as exc:
        raise ChatTemplateError(f"the chat template is not valid Jinja: {exc.message}",
                                file=f"{origin}:{exc.lineno}", field="chat_template",
                                expected="the template the model's repository ships") from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:  # huge literals, deep nesting
        raise ChatTemplateError(f"the chat template cannot be compiled: {type(exc).__name__}: {exc}"[:300],
                                file=origin, field="chat_template",
                                expected="the template the model's repository ships") from None


def _plain(value: Any) -> Any:
    """Only JSON-shaped data reaches the template (no objects whose methods the sandbox does not know)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return f"<{type(value).__name__}>"


def hf_messages(rendered: Any) -> list[dict[str, Any]]:
    """``[{role: user|assistant|system, content}]`` from a rendered chat prompt (ours or OpenAI's form, or a str).

    Keys that are None are dropped (as transformers does); in the renderer's form an
    empty turn is skipped (as OpenCompass does before applying a chat template).
    """
    if isinstance(rendered, str):
        return [{"role": "user", "content": rendered}]
    out = []
    for m in rendered:
        if not isinstance(m, Mapping):
            raise ChatTemplateError("a chat message must be a dict", field="messages", value=m)
        if "content" in m:
            out.append({k: v for k, v in m.items() if v is not None})
            continue
        # the renderer's form: an empty turn is left out, as the references do before a chat template
        if m.get("prompt") in ("", None, []):
            continue
        role = str(m.get("role"))
        out.append({"role": _ROLES.get(role, role.lower()), "content": m.get("prompt")})
    return out


def render_with_chat_template(messages: Any, tokenizer_path_or_obj: Any, add_generation_prompt: bool = True,
                              **template_kwargs: Any) -> str:
    """The text a chat-template model receives for ``messages``.

    ``tokenizer_path_or_obj``: a tokenizer folder (only its files are read), a loaded
    tokenizer, or a :class:`ChatTemplate`. Equals
    ``tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=...)``.
    Messages may be OpenAI-style or the renderer's ``{role: HUMAN, prompt}`` form.
    """
    import jinja2

    tpl = load_chat_template(tokenizer_path_or_obj)
    if tpl is None:
        where = str(tokenizer_path_or_obj) if isinstance(tokenizer_path_or_obj, (str, Path)) else None
        raise ChatTemplateError("the tokenizer has no chat_template", file=where, field="chat_template",
                                expected="a tokenizer whose tokenizer_config.json holds chat_template, or a "
                                         "meta_template in the model config")
    msgs = _plain(hf_messages(messages))
    if not msgs:
        raise ChatTemplateError("no messages to render", field="messages", value=messages)
    kwargs = {**tpl.special_tokens, **_plain(template_kwargs)}
    compiled = _compiled(tpl.source, tpl.origin)
    from promptweave.render.jinja_budget import render_budgeted

    try:
        return render_budgeted(compiled, tpl.origin, messages=msgs, tools=None, documents=None,
                               add_generation_prompt=add_generation_prompt, **kwargs)
    except ChatTemplateError:
        raise  # a budget refusal, already naming the template and the budget
    except jinja2.TemplateError as exc:
        raise ChatTemplateError(f"the chat template refused these messages: {exc}", file=tpl.origin,
                                field="chat_template",
                                expected="messages in the roles and order the template accepts") from None
    except Exception as exc:  # noqa: BLE001 - the template is input: whatever it raises is its fault, not ours
        reason = "nests macro calls too deeply" if isinstance(exc, RecursionError) else f"raised {type(exc).__name__}"
        raise ChatTemplateError(f"the chat template {reason}: {str(exc)[:200]}", file=tpl.origin,
                                field="chat_template",
                                expected="the template the model's repository ships") from None


def has_chat_template(tokenizer_path_or_obj: Any) -> bool:
    try:
        return load_chat_template(tokenizer_path_or_obj) is not None
    except ChatTemplateError:
        return False


def segments_of(rendered_text: str, messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The rendered text cut into (piece, tag): each message's content (``role:<role>``) and template text (``meta``)."""
    out: list[tuple[str, str]] = []
    pos = 0
    for m in hf_messages(messages):
        content = m.get("content")
        if not isinstance(content, str) or not content:
            continue
        at = rendered_text.find(content, pos)
        if at < 0:
            continue
        if at > pos:
            out.append((rendered_text[pos:at], "meta"))
        out.append((content, f"role:{m.get('role')}"))
        pos = at + len(content)
    if pos < len(rendered_text):
        out.append((rendered_text[pos:], "meta"))
    return out


def chat_template_ids(tokenizer: Any, messages: Sequence[dict]) -> list[int]:
    """The ids ``tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)`` gives, with
    the template rendered in the project's sandboxed, budgeted renderer: a tokenizer folder's template is input,
    and transformers' own renderer bounds neither its loops nor its output."""
    text = render_with_chat_template(list(messages), tokenizer, add_generation_prompt=True)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return list(ids)


__all__ = [
    "chat_template_ids",
    "ChatTemplate",
    "check_tokenizer_folder",
    "has_chat_template",
    "hf_messages",
    "load_chat_template",
    "render_with_chat_template",
    "segments_of",
]

