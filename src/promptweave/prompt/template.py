"""Dataset-side prompt templates: string, dialogue (begin/round/end) or label -> template.

A :class:`PromptTemplate` validates its config once and compiles each text the
first time a (label, purpose, token-stripping) combination is asked for.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Union

from promptweave.errors import PromptweaveWarning, TemplateError
from promptweave.prompt.dialogue import ContentPart, Dialogue, SectionMark, Turn
from promptweave.prompt.raw import EXPAND_ROLE, expand_turns
from promptweave.prompt.text import CompiledText

_TURN_KEYS = ("role", "prompt", "fallback_role")


@dataclass(frozen=True, slots=True)
class TurnTemplate:
    """A role item of a dialogue template, with its text compiled."""

    role: str
    prompt: CompiledText | None
    fallback_role: str | None
    extra: tuple[tuple[str, Any], ...]
    field: str
    mm: Any = None  # multimodal spec (``prompt_mm``), interpreted by the multimodal filler


TemplateItem = Union[CompiledText, TurnTemplate, SectionMark]


def _is_dialogue(value: Any) -> bool:
    return isinstance(value, Mapping) and "round" in value and all(k in ("begin", "round", "end") for k in value)


class PromptTemplate:
    """A dataset prompt template, in any of the references' three shapes.

    ``template`` is a string, a dialogue ``{"begin": ..., "round": [...], "end": ...}``
    or a mapping of label -> string/dialogue (for perplexity scoring).
    ``ice_token`` marks where in-context examples go; ``sep_token`` is removed
    from prompts (the references keep it only where ``normalizing_str`` asks).
    """

    kind_name = "PromptTemplate"

    def __init__(self, template: Any, ice_token: str | None = None, sep_token: str | None = None,
                 *, field: str = "template", file: str | None = None, **unknown: Any) -> None:
        self.template = template
        self.ice_token = ice_token
        self.sep_token = sep_token
        self.field = field
        self.file = file
        self._compiled: dict[tuple, Any] = {}
        self._validate(unknown)

    # ------------------------------------------------------------------ validation
    def _err(self, message: str, sub: str = "", **kw: Any) -> TemplateError:
        return TemplateError(message, file=self.file, field=self.field + sub, **kw)

    def _validate(self, unknown: Mapping[str, Any]) -> None:
        if unknown:
            name = sorted(unknown)[0]
            raise TemplateError(f"unknown template setting {name!r}", file=self.file,
                                field=self.field.rsplit(".", 1)[0] + "." + name,
                                expected="template, ice_token, sep_token")
        for tok_name in ("ice_token", "sep_token"):
            tok = getattr(self, tok_name)
            if tok is not None and (not isinstance(tok, str) or not tok):
                raise TemplateError(f"{tok_name} must be a non-empty string", file=self.file,
                                    field=self.field.rsplit(".", 1)[0] + "." + tok_name, value=tok)
        t = self.template
        if isinstance(t, str):
            self.shape = "string"
            self._check_ice(t, "")
        elif isinstance(t, Mapping):
            if not t:
                raise self._err("template mapping is empty", expected="a string, a dialogue or label -> template")
            if _is_dialogue(t):
                self.shape = "dialogue"
                self._validate_dialogue(t, "")
            elif any(k in ("begin", "round", "end") for k in t) and all(
                    k in ("begin", "round", "end") for k in t):
                raise self._err("a dialogue template needs a 'round' list", expected="round=[dict(role=..., prompt=...)]")
            else:
                self.shape = "labels"
                for label, sub in t.items():
                    path = f"[{label!r}]"
                    if isinstance(sub, str):
                        self._check_ice(sub, path)
                    elif isinstance(sub, Mapping):
                        if not _is_dialogue(sub):
                            raise self._err("label template must be a string or a dialogue with 'round'", path,
                                            value=sub)
                        self._validate_dialogue(sub, path)
                    else:
                        raise self._err("label template must be a string or a dialogue", path, value=sub)
        else:
            raise self._err("template must be a string, a dialogue dict or a label -> template dict", value=t)

    def _check_ice(self, text: str, path: str) -> None:
        if self.ice_token and self.ice_token not in text:
            raise self._err(f"ice_token {self.ice_token!r} does not occur in the template", path, value=text,
                            expected="the ice_token where in-context examples go")

    def _validate_dialogue(self, d: Mapping[str, Any], path: str) -> None:
        rnd = d.get("round")
        if not isinstance(rnd, list):
            raise self._err("'round' must be a list of turns", path + ".round", value=rnd,
                            expected="[dict(role=..., prompt=...), ...]")
        found_ice = False
        for sec in ("begin", "round", "end"):
            if sec not in d:
                continue
            items = d[sec]
            if isinstance(items, (str, Mapping)):
                items = [items]
                where = [path + f".{sec}"]
            elif isinstance(items, list):
                where = [path + f".{sec}[{i}]" for i in range(len(items))]
            else:
                raise self._err(f"'{sec}' must be a string, a turn or a list", path + f".{sec}", value=items)
            for item, p in zip(items, where):
                if isinstance(item, str):
                    found_ice |= bool(self.ice_token and self.ice_token in item)
                elif isinstance(item, Mapping):
                    if "section" in item:
                        raise self._err("section markers are not template items", p, value=item)
                    role = item.get("role")
                    if not isinstance(role, str) or not role:
                        raise self._err("a turn needs a 'role' string", p + ".role", value=role,
                                        expected="e.g. 'HUMAN', 'BOT' or 'SYSTEM'")
                    fb = item.get("fallback_role")
                    if fb is not None and not isinstance(fb, str):
                        raise self._err("fallback_role must be a string", p + ".fallback_role", value=fb)
                    pr = item.get("prompt")
                    if pr is not None and not isinstance(pr, str):
                        raise self._err("a turn's prompt must be a string", p + ".prompt", value=pr)
                    if "prompt_mm" in item and not isinstance(item["prompt_mm"], Mapping):
                        raise self._err("prompt_mm must be a mapping of modality -> part", p + ".prompt_mm",
                                        value=item["prompt_mm"])
                    found_ice |= bool(self.ice_token and pr and self.ice_token in pr)
                else:
                    raise self._err("a dialogue item must be a string or a turn dict", p, value=item)
        if self.ice_token and not found_ice:
            # The references accept this (examples are then simply not shown); the builder
            # warns again if examples were actually retrieved for such a template.
            warnings.warn(f"{self.file + ': ' if self.file else ''}{self.field}{path}: ice_token "
                          f"{self.ice_token!r} does not occur in the dialogue, so in-context examples have no place",
                          PromptweaveWarning, stacklevel=4)

    # ------------------------------------------------------------------ selection
    @property
    def is_label_dict(self) -> bool:
        return self.shape == "labels"

    @property
    def is_dialogue_shape(self) -> bool:
        """True for a plain begin/round/end dialogue (the references' 'meta' prompt type)."""
        return self.shape == "dialogue"

    def labels(self) -> list[Any]:
        return list(self.template.keys()) if self.shape == "labels" else []

    def raw_for(self, label: Any = None, *, first_if_missing: bool = False) -> tuple[Any, Any]:
        """The raw template used for ``label``: (key, raw). Label dicts match ``label`` or ``str(label)``."""
        if self.shape != "labels":
            return None, self.template
        t = self.template
        if first_if_missing:
            key = next(iter(t))
            return key, t[key]
        if label in t:
            return label, t[label]
        if str(label) in t:
            return str(label), t[str(label)]
        raise TemplateError(f"no template for label {label!r}", file=self.file, field=self.field, value=label,
                            expected="one of " + ", ".join(repr(k) for k in t))

    # ------------------------------------------------------------------ compilation
    def compiled(self, key: Any, raw: Any, *, ice: bool, ice_token: str | None,
                 strip_before: tuple[str, ...] = (), strip_after: tuple[str, ...] = ()) -> Any:
        """Compile ``raw`` (string or dialogue) into a CompiledText or a tuple of TemplateItems.

        ``ice=True`` encodes a dialogue as an in-context example (its begin/end are dropped).
        """
        ck = (key, ice, ice_token, strip_before, strip_after)
        hit = self._compiled.get(ck)
        if hit is not None:
            return hit
        sub = "" if key is None else f"[{key!r}]"

        def text(s: str) -> CompiledText:
            return CompiledText.parse(s, ice_token=ice_token, strip_before_ice=strip_before,
                                      strip_after_ice=strip_after)

        if isinstance(raw, str):
            out: Any = text(raw)
        else:
            items: list[TemplateItem] = []

            def add_section(name: str, value: Any, sec_field: str) -> None:
                values = value if isinstance(value, list) else [value]
                for i, it in enumerate(values):
                    p = f"{self.field}{sub}.{sec_field}" + (f"[{i}]" if isinstance(value, list) else "")
                    if isinstance(it, str):
                        items.append(text(it))
                    else:
                        extra = tuple((k, v) for k, v in it.items() if k not in _TURN_KEYS and k != "prompt_mm")
                        pr = it.get("prompt")
                        items.append(TurnTemplate(it["role"], None if pr is None else text(pr),
                                                  it.get("fallback_role"), extra, p, it.get("prompt_mm")))

            if "begin" in raw and not ice:
                items.append(SectionMark("begin", "begin"))
                add_section("begin", raw["begin"], "begin")
                items.append(SectionMark("begin", "end"))
            sec = "ice" if ice else "round"
            items.append(SectionMark(sec, "begin"))
            add_section("round", raw["round"], "round")
            items.append(SectionMark(sec, "end"))
            if "end" in raw and not ice:
                items.append(SectionMark("end", "begin"))
                add_section("end", raw["end"], "end")
                items.append(SectionMark("end", "end"))
            out = tuple(items)
        self._compiled[ck] = out
        return out

    def expand_columns(self) -> list[str]:
        """Columns whose message lists a RawPromptTemplate splices in (``expand_column``)."""
        out: list[str] = []

        def walk(v: Any) -> None:
            if isinstance(v, Mapping):
                if v.get("role") == EXPAND_ROLE:
                    out.append(v["expand_column"])
                for x in v.values():
                    walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)

        walk(self.template)
        return out

    def placeholder_names(self) -> set[str]:
        """Every ``{name}`` any of this template's texts mention."""
        names: set[str] = set()

        def walk(v: Any) -> None:
            if isinstance(v, str):
                names.update(CompiledText.parse(v).names)
            elif isinstance(v, Mapping):
                for k, x in v.items():
                    if k in ("prompt", "begin", "round", "end") or self.shape == "labels":
                        walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)

        walk(self.template)
        return names

    def __repr__(self) -> str:
        return f"PromptTemplate({self.shape}, ice_token={self.ice_token!r}, sep_token={self.sep_token!r})"


# --------------------------------------------------------------------------- filling
Ice = Union[str, Dialogue]


def fill_items(compiled: Any, row: Mapping[str, Any], ice: Ice = "", *, field: str = "template") -> Any:
    """Fill a compiled template with one row: returns a str or a Dialogue.

    ``ice`` is the already-filled in-context text (str) or examples (Dialogue).
    A Dialogue ice inside a string item is spliced in as separate items; empty
    pieces around it are dropped, as the references do.
    """
    if isinstance(compiled, CompiledText):
        if isinstance(ice, Dialogue):
            if compiled.has_ice:
                raise TemplateError("dialogue-shaped in-context examples cannot go into a string template",
                                    field=field, expected="a string ice_template, or a dialogue prompt template")
            ice = ""
        return compiled.fill(row, ice)
    out: list = []
    ice_is_dialogue = isinstance(ice, Dialogue)
    for it in compiled:
        t = type(it)
        if t is SectionMark:
            out.append(it)
        elif t is CompiledText:
            if ice_is_dialogue and it.has_ice:
                pieces = it.split_on_ice()
                for i, piece in enumerate(pieces):
                    if piece.source:
                        out.append(piece.fill(row))
                    if i < len(pieces) - 1:
                        out.extend(ice.items)
            else:
                out.append(it.fill(row, ice if not ice_is_dialogue else ""))
        elif it.role == EXPAND_ROLE:  # RawPromptTemplate's expand_column: the row's own messages
            col = dict(it.extra)["expand_column"]
            out.extend(expand_turns(col, row.get(col), field=it.field))
        else:
            prompt = None
            if it.prompt is not None:
                if ice_is_dialogue and it.prompt.has_ice:
                    raise TemplateError("the ice_token sits inside a turn's prompt, where dialogue-shaped "
                                        "examples cannot go", field=it.field + ".prompt",
                                        expected="the ice_token as a separate string item, e.g. begin='</E>'")
                prompt = it.prompt.fill(row, "" if ice_is_dialogue else ice)
            parts = None
            if it.mm is not None:
                from promptweave.prompt.multimodal import fill_mm  # lazy: only multimodal templates need it

                parts = fill_mm(it.mm, row, field=it.field)
            out.append(Turn(it.role, prompt, it.fallback_role, parts, it.extra))
    return Dialogue(tuple(out))


__all__ = ["PromptTemplate", "TurnTemplate", "fill_items", "ContentPart"]
