"""Templates whose one turn is computed from the whole row, for reference template classes that write the prompt
in code from plain row data (OlympiadBench's instruction depends on the row's language, subject, answer type...).

Such a template is a :class:`PromptTemplate` with a single-turn dialogue, so sections, meta templates, renderers,
``view`` and ``run`` treat it like any other; only its turn's text is a :class:`RowText` (the row -> text function)
instead of a compiled ``{name}`` text. The builder takes its general path for these (``per_row``): compiled plans
cut a prompt rendered once with marker values, which a text computed from the values cannot be.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from promptweave.errors import TemplateError
from promptweave.prompt.dialogue import SectionMark
from promptweave.prompt.template import PromptTemplate, TurnTemplate

Row = Mapping[str, Any]


class RowText:
    """A turn's text made from the whole row; fills like a compiled text (no in-context slot)."""

    __slots__ = ("make", "source")
    has_ice = False
    names: tuple[str, ...] = ()
    segments: tuple = ()

    def __init__(self, make: Callable[[Row], str], source: str) -> None:
        self.make = make
        self.source = source  # what a reader is shown for the template text

    def fill(self, row: Row, ice: Any = "") -> str:
        return self.make(row)

    def __repr__(self) -> str:
        return f"RowText({self.source!r})"


def replace_in_turn(text: str, values: Mapping[str, Any]) -> str:
    """``{name}`` -> ``str(value)`` for each name in turn over the whole text, as OpenCompass fills a turn
    (``safe_format``): a later name also replaces inside an earlier name's value; unknown names stay as written."""
    for name, value in values.items():
        text = text.replace("{" + str(name) + "}", str(value))
    return text


class RowTemplate(PromptTemplate):
    """A single ``role`` turn whose text is ``self.text(row)``. Subclasses set ``role``, ``shown`` (the turn text
    as the reference's class writes it, for display) and implement ``text``."""

    role = "HUMAN"
    shown = "{prompt}"
    per_row = True  # read by the builder: no compiled plans
    raw_messages = False  # True: sent to chat APIs as written, like a RawPromptTemplate's messages

    def __init__(self, *, file: str | None = None, field: str = "prompt_template.template") -> None:
        super().__init__({"round": [{"role": self.role, "prompt": self.shown}]}, field=field, file=file)
        self.output_column: str | None = None
        self.output_token: Any = ""

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], *, kind_name: str, file: str | None, field: str) -> RowTemplate:
        extra = sorted(str(k) for k in cfg if k != "type")
        if extra:
            raise TemplateError(f"{kind_name} takes no settings (its prompt is written from each row)", file=file,
                                field=f"{field}.{extra[0]}", value=cfg[extra[0]], expected=f"dict(type='{kind_name}')")
        tpl = cls(file=file, field=field + ".template")
        tpl.kind_name = kind_name
        return tpl

    def bind_output(self, column: str | None, token: Any) -> None:
        """The dataset's answer column and what generation puts in its place (``gen_field_replace_token``)."""
        self.output_column, self.output_token = column, token

    def text(self, row: Row) -> str:
        raise NotImplementedError

    def stand_in_values(self) -> dict[str, Any]:
        """Row values ``lint --no-data`` uses instead of ``<name>`` for the columns the text is computed from."""
        return {}

    def placeholder_names(self) -> set[str]:
        # the columns are read with defaults, never left in the prompt as ``{name}``: none can be "unfilled"
        return set()

    def compiled(self, key: Any, raw: Any, *, ice: bool, ice_token: str | None,
                 strip_before: tuple[str, ...] = (), strip_after: tuple[str, ...] = ()) -> Any:
        ck = ("row", ice)
        hit = self._compiled.get(ck)
        if hit is None:
            sec = "ice" if ice else "round"
            turn = TurnTemplate(self.role, RowText(self.text, self.shown), None, (), f"{self.field}.round[0]")
            hit = self._compiled[ck] = (SectionMark(sec, "begin"), turn, SectionMark(sec, "end"))
        return hit

    def __repr__(self) -> str:
        return f"{getattr(self, 'kind_name', type(self).__name__)}()"
