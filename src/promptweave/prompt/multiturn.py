"""Multi-turn prompts: one dialogue per model call, built from a row's question and answer lists.

A :class:`MultiTurnPromptTemplate` has the dialogue shape (``begin`` / ``round``
/ ``end``). Its ``round`` is repeated once per turn of the conversation, filled
with that turn's ``question`` and ``answer`` only; ``begin`` and ``end`` are used
as written (as in AISBench). The prompt of request *k* holds the begin turns,
every round item before the *k*-th ``BOT`` item, then the end turns. What the
earlier ``BOT`` items say depends on the inference mode:

* ``every``: the model's own earlier replies (each replaces the whole BOT prompt);
* ``every_with_gt``: the ground-truth answers, one request per BOT item;
* ``last``: one request, with ground truth, before the last BOT item.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from promptweave.errors import DataError, PromptweaveWarning, TemplateError
from promptweave.prompt.dialogue import Dialogue, SectionMark, Turn
from promptweave.prompt.template import PromptTemplate
from promptweave.prompt.text import CompiledText

INFER_MODES = ("every", "every_with_gt", "last")
BOT_ROLE = "BOT"


@dataclass(frozen=True)
class RoundItem:
    role: str
    prompt: CompiledText
    fallback_role: str | None
    extra: tuple[tuple[str, Any], ...]

    @property
    def is_bot(self) -> bool:
        return self.role == BOT_ROLE


@dataclass(frozen=True)
class Conversation:
    """A row's turns: (question, ground-truth answer) pairs, in order."""

    index: int
    questions: tuple[Any, ...]
    answers: tuple[Any, ...]

    def __len__(self) -> int:
        return len(self.questions)


class MultiTurnPromptTemplate(PromptTemplate):
    """A dialogue template whose ``round`` is repeated for each turn of a conversation.

    ``question_key`` / ``answer_key`` name the row's list columns (AISBench
    hard-codes ``question`` and ``answer``).
    """

    kind_name = "MultiTurnPromptTemplate"

    def __init__(self, template: Any, ice_token: str | None = None, sep_token: str | None = None, *,
                 question_key: str = "question", answer_key: str = "answer", **kw: Any) -> None:
        self.question_key = question_key
        self.answer_key = answer_key
        super().__init__(template, ice_token, sep_token, **kw)
        if self.shape != "dialogue":
            raise self._err("a multi-turn template must be a dialogue: dict(begin=..., round=[...], end=...)",
                            value=template)
        self._begin = self._fixed("begin")
        self._end = self._fixed("end")
        self._round = self._round_items()

    # ------------------------------------------------------------------ compile
    def _items(self, sec: str) -> list[tuple[str, Any]]:
        v = self.template.get(sec)
        if v is None:
            return []
        if isinstance(v, list):
            return [(f"{self.field}.{sec}[{i}]", x) for i, x in enumerate(v)]
        return [(f"{self.field}.{sec}", v)]

    def _check_item(self, path: str, item: Any) -> None:
        if isinstance(item, str):
            raise TemplateError("plain string items are not supported in a multi-turn template", file=self.file,
                                field=path, value=item, expected="a turn dict(role=..., prompt=...)")
        if "prompt_mm" in item:
            raise TemplateError("multimodal turns are not supported in a multi-turn template", file=self.file,
                                field=path + ".prompt_mm")
        if not isinstance(item.get("prompt"), str):
            raise TemplateError("every turn of a multi-turn template needs a 'prompt' string", file=self.file,
                                field=path + ".prompt", value=item.get("prompt"))

    def _fixed(self, sec: str) -> tuple[Turn, ...]:
        out = []
        for path, item in self._items(sec):
            self._check_item(path, item)
            extra = tuple((k, v) for k, v in item.items() if k not in ("role", "prompt", "fallback_role"))
            out.append(Turn(item["role"], item["prompt"], item.get("fallback_role"), None, extra))
        return tuple(out)

    def _round_items(self) -> tuple[RoundItem, ...]:
        out = []
        for path, item in self._items("round"):
            self._check_item(path, item)
            extra = tuple((k, v) for k, v in item.items() if k not in ("role", "prompt", "fallback_role"))
            out.append(RoundItem(item["role"], CompiledText.parse(item["prompt"]), item.get("fallback_role"), extra))
        if not any(r.is_bot for r in out):
            raise TemplateError("a multi-turn round needs a BOT turn: each BOT item is where the model answers",
                                file=self.file, field=f"{self.field}.round",
                                expected="dict(role='BOT', prompt='{answer}')")
        return tuple(out)

    def compiled(self, *a: Any, **kw: Any) -> Any:
        raise TemplateError("a MultiTurnPromptTemplate builds one prompt per turn: use it with "
                            "MultiTurnGenInferencer (promptweave.forms.turn_loop)", file=self.file, field=self.field)

    def placeholder_names(self) -> set[str]:
        names: set[str] = set()
        for r in self._round:
            names.update(r.prompt.names)
        return names

    @property
    def bots_per_round(self) -> int:
        return sum(1 for r in self._round if r.is_bot)

    # ------------------------------------------------------------------ rows
    def conversation(self, row: Mapping[str, Any], *, index: int, file: str | None = None,
                     strict: bool = False) -> Conversation:
        """The row's (question, answer) turns.

        Lists of different lengths are cut to the shorter one, as the reference
        does, with a warning naming the row (an error with ``strict=True``).
        """
        cols = []
        for key in (self.question_key, self.answer_key):
            if key not in row:
                raise DataError(f"a multi-turn row needs a {key!r} list", file=file, field=f"test[{index}].{key}",
                                expected=f"a list with one {key} per turn")
            v = row[key]
            if not isinstance(v, (list, tuple)):
                raise DataError(f"the {key!r} column of a multi-turn row must be a list (one entry per turn)",
                                file=file, field=f"test[{index}].{key}", value=v, expected="a list")
            cols.append(tuple(v))
        q, a = cols
        if len(q) != len(a):
            msg = (f"row {index}: {len(q)} {self.question_key}(s) but {len(a)} {self.answer_key}(s); "
                   f"only the first {min(len(q), len(a))} turn(s) are used")
            if strict:
                raise DataError(msg, file=file, field=f"test[{index}].{self.answer_key}", value=len(a),
                                expected=f"{len(q)} entries, one per {self.question_key}")
            warnings.warn(f"{file + ': ' if file else ''}test[{index}]: {msg}", PromptweaveWarning, stacklevel=3)
            n = min(len(q), len(a))
            q, a = q[:n], a[:n]
        return Conversation(index, q, a)

    # ------------------------------------------------------------------ prompts
    def n_requests(self, conv: Conversation, infer_mode: str) -> int:
        """How many model calls a conversation takes in ``infer_mode``."""
        check_mode(infer_mode)
        total = len(conv) * self.bots_per_round
        return min(total, 1) if infer_mode == "last" else total

    def prompt(self, conv: Conversation, k: int, replies: Sequence[str] | None = None) -> Dialogue:
        """The dialogue of request ``k``: everything before the ``k``-th BOT item.

        Earlier BOT items hold ``replies[j]`` where given (``every``), else the
        template filled with the ground truth.
        """
        round_items: list[Any] = []
        bot = 0
        done = False
        for q, a in zip(conv.questions, conv.answers):
            values = {self.question_key: q, self.answer_key: a}
            for r in self._round:
                if r.is_bot:
                    if bot == k:
                        done = True
                        break
                    text = replies[bot] if replies is not None and bot < len(replies) else r.prompt.fill(values)
                    bot += 1
                else:
                    text = r.prompt.fill(values)
                round_items.append(Turn(r.role, text, r.fallback_role, None, r.extra))
            if done:
                break
        if not done:
            raise DataError(f"request {k} is past the conversation's last BOT turn", field=f"test[{conv.index}]",
                            value=k)
        items: list[Any] = []
        if "begin" in self.template:
            items += [SectionMark("begin", "begin"), *self._begin, SectionMark("begin", "end")]
        items += [SectionMark("round", "begin"), *round_items, SectionMark("round", "end")]
        if "end" in self.template:
            items += [SectionMark("end", "begin"), *self._end, SectionMark("end", "end")]
        return Dialogue(tuple(items))

    def last_prompt(self, conv: Conversation) -> Dialogue:
        """The single prompt of ``last`` mode (ground truth before the last BOT item)."""
        return self.prompt(conv, len(conv) * self.bots_per_round - 1)


def check_mode(infer_mode: str) -> str:
    if infer_mode not in INFER_MODES:
        raise TemplateError(f"unknown infer_mode {infer_mode!r}", field="infer_cfg.inferencer.infer_mode",
                            value=infer_mode, expected=" or ".join(INFER_MODES))
    return infer_mode


__all__ = ["MultiTurnPromptTemplate", "Conversation", "INFER_MODES", "check_mode"]
