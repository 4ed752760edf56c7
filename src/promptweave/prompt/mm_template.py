"""AISBench's ``MMPromptTemplate``: a ``PromptTemplate`` whose ``prompt_mm`` turns are built from the row's content.

It sits above both the plain template (``prompt/template.py``) and the content parts (``prompt/multimodal.py``),
so neither of those needs the other's template kind.
"""
from __future__ import annotations

import warnings
from typing import Any, Mapping

from promptweave.errors import PromptweaveWarning, TemplateError
from promptweave.prompt.multimodal import MMSpec
from promptweave.prompt.template import PromptTemplate, TurnTemplate
from promptweave.prompt.text import CompiledText, Slot


def _literal(ct: CompiledText | None) -> CompiledText | None:
    """The same text with its ``{name}`` slots kept as written (the ice slot, if any, stays)."""
    if ct is None or not any(type(s) is Slot for s in ct.segments):
        return ct
    return CompiledText(ct.source, tuple("{" + s.name + "}" if type(s) is Slot else s for s in ct.segments))


class MMPromptTemplate(PromptTemplate):
    """AISBench's multimodal template: ``prompt_mm`` turns are built from the row's ``content`` column.

    As in the reference, a turn's plain ``prompt`` is not filled from the row
    (a warning names any placeholder that therefore stays); plain string items
    are filled from the whole row.
    """

    kind_name = "MMPromptTemplate"

    def _validate_dialogue(self, d: Mapping[str, Any], path: str) -> None:
        super()._validate_dialogue(d, path)
        for sec in ("begin", "round", "end"):
            items = d.get(sec)
            items = items if isinstance(items, list) else ([] if items is None else [items])
            for i, item in enumerate(items):
                if not isinstance(item, Mapping):
                    continue
                p = f"{self.field}{path}.{sec}[{i}]"
                if "prompt_mm" in item:
                    if item.get("prompt") is not None:
                        raise TemplateError("a turn has both 'prompt' and 'prompt_mm'", file=self.file, field=p,
                                            expected="the text as prompt_mm.text")
                    spec = MMSpec.compile(item["prompt_mm"], field=p + ".prompt_mm", file=self.file)
                    self.__dict__.setdefault("_mm_specs", {})[id(item["prompt_mm"])] = spec
                elif isinstance(item.get("prompt"), str):
                    names = CompiledText.parse(item["prompt"]).names
                    if names:
                        warnings.warn(f"{self.file + ': ' if self.file else ''}{p}.prompt: an MMPromptTemplate "
                                      "does not fill turn prompts from the row (as in the reference); "
                                      + ", ".join("{" + n + "}" for n in names) + " stays as written",
                                      PromptweaveWarning, stacklevel=5)

    def compiled(self, key: Any, raw: Any, **kw: Any) -> Any:
        out = super().compiled(key, raw, **kw)
        if not isinstance(out, tuple):
            return out
        mm_key = ("mm",) + (key,) + tuple(sorted(kw.items()))
        hit = self._compiled.get(mm_key)
        if hit is not None:
            return hit
        items = []
        for it in out:
            if type(it) is TurnTemplate:
                mm = it.mm
                if mm is not None:
                    mm = self.__dict__.get("_mm_specs", {}).get(id(mm)) or MMSpec.compile(
                        mm, field=it.field + ".prompt_mm", file=self.file)
                it = TurnTemplate(it.role, _literal(it.prompt), it.fallback_role, it.extra, it.field, mm)
            items.append(it)
        res = tuple(items)
        self._compiled[mm_key] = res
        return res

    def placeholder_names(self) -> set[str]:
        names: set[str] = set()
        t = self.template
        for sec in ("begin", "round", "end"):
            items = t.get(sec) if isinstance(t, Mapping) else None
            items = items if isinstance(items, list) else ([] if items is None else [items])
            for item in items:
                if isinstance(item, str):
                    names.update(CompiledText.parse(item).names)
        return names


__all__ = ["MMPromptTemplate"]
