"""In-context examples: fill the ice template with each chosen train row and join them."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from promptweave.errors import TemplateError
from promptweave.prompt.dialogue import Dialogue
from promptweave.prompt.template import Ice, PromptTemplate, fill_items


def build_ice(
    ice_template: PromptTemplate | None,
    train: Sequence[Mapping[str, Any]],
    ids: Sequence[int],
    *,
    output_column: str | None,
    separator: str,
    eos: str,
    strip: tuple[str, ...] = (),
) -> Ice:
    """The in-context block for one test row.

    String examples are joined as ``separator.join(items) + eos``; dialogue
    examples are concatenated, each followed by ``separator`` as its own item
    (none when empty), then ``eos``. A plain begin/round/end ice template forces
    both separators to ``""``. ``strip`` lists template tokens (a prompt
    template's ``sep_token`` in generation) to remove from the non-data text.
    """
    if ice_template is None:
        if ids:
            raise TemplateError("in-context examples were retrieved but no ice_template is given",
                                field="infer_cfg.ice_template",
                                expected="an ice_template, or ZeroRetriever")
        return _strip(eos, strip)
    if ice_template.is_dialogue_shape:
        separator, eos = "", ""
    separator, eos = _strip(separator, strip), _strip(eos, strip)
    items = []
    for i in ids:
        row = train[i]
        label = row.get(output_column) if output_column else None
        key, raw = ice_template.raw_for(label)
        compiled = ice_template.compiled(key, raw, ice=True, ice_token=ice_template.ice_token,
                                         strip_after=strip)
        items.append(fill_items(compiled, row, "", field=ice_template.field))
    if items and isinstance(items[0], Dialogue):
        out: list = []
        for it in items:
            if not isinstance(it, Dialogue):
                raise TemplateError("in-context examples mix strings and dialogues", field=ice_template.field)
            out.extend(it.items)
            if separator:
                out.append(separator)
        out.append(eos)
        return Dialogue(tuple(out))
    return separator.join(items) + eos


def _strip(text: str, tokens: tuple[str, ...]) -> str:
    for t in tokens:
        if t:
            text = text.replace(t, "")
    return text
