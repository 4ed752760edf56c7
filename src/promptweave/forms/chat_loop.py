"""OpenCompass's ``ChatInferencer`` with ``infer_mode='every'`` / ``'every_with_gt'``: a reply per assistant turn.

The row holds the chat itself (a ``dialogue`` input column, or a single input column holding the messages,
``[{'role': 'user' | 'assistant' | 'system', 'content': ...}, ...]``); the prompt template is not used for it, as
in the reference. Request *k* sends every message before the chat's *k*-th assistant message, the earlier
assistant messages holding the model's own replies (``every``) or the row's ground truth (``every_with_gt``).

:class:`ChatDialogueTemplate` gives those requests the interface of a multi-turn template, so the one
conversation loop (:class:`promptweave.forms.turn_loop.MultiTurnGenInferencer`, through the response cache)
runs them; :func:`chat_prediction` stores the replies the reference's way: with a ``dialogue`` column and
``every``, a list of ``{'round', 'user', 'assistant'}`` (what ``LMEvaluator`` judges), else the list of replies.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from promptweave.errors import DataError, UnsupportedError
from promptweave.prompt.dialogue import Dialogue, SectionMark, Turn

_ROLES = {"system": "SYSTEM", "user": "HUMAN", "assistant": "BOT"}
DIALOGUE_COLUMN = "dialogue"


@dataclass(frozen=True)
class ChatConversation:
    """A row's chat: its messages as ``(role, content)`` and where the assistant messages are."""

    index: int
    messages: tuple[tuple[str, str], ...]
    bots: tuple[int, ...]

    @property
    def answers(self) -> tuple[str, ...]:
        """The ground-truth assistant messages, in order (each request's gold)."""
        return tuple(self.messages[i][1] for i in self.bots)

    def __len__(self) -> int:
        return len(self.bots)


class ChatDialogueTemplate:
    """The requests of a row's chat, shaped as a multi-turn template (one BOT item per round)."""

    kind_name = "ChatInferencer dialogue"
    bots_per_round = 1

    def __init__(self, input_columns: Sequence[str], *, file: str | None = None, field: str = "reader_cfg") -> None:
        cols = tuple(input_columns)
        if DIALOGUE_COLUMN in cols:
            self.column, self.dialogue_mode = DIALOGUE_COLUMN, True
        elif len(cols) == 1:
            self.column, self.dialogue_mode = cols[0], False
        else:
            raise UnsupportedError(
                "ChatInferencer with infer_mode 'every' / 'every_with_gt' reads each row's chat from a 'dialogue' "
                "input column or a single input column holding the messages; chats assembled from several text "
                "columns are not supported", file=file, field=f"{field}.input_columns", value=list(cols),
                expected="input_columns=['dialogue', ...] or one column of [{'role': ..., 'content': ...}] lists")
        self.file = file

    def conversation(self, row: Mapping[str, Any], *, index: int, file: str | None = None,
                     strict: bool = False) -> ChatConversation:
        file = file or self.file
        where = f"test[{index}].{self.column}"
        chat = row.get(self.column) if isinstance(row, Mapping) else None
        if not isinstance(chat, (list, tuple)):
            raise DataError("a ChatInferencer row needs its chat as a list of messages", file=file, field=where,
                            value=chat, expected="[{'role': 'user', 'content': '...'}, {'role': 'assistant', ...}]")
        messages = []
        for n, m in enumerate(chat):
            role = m.get("role") if isinstance(m, Mapping) else None
            content = m.get("content") if isinstance(m, Mapping) else None
            if role not in _ROLES or not (content is None or isinstance(content, str)):
                raise DataError("each message needs a role (user, assistant or system) and text content",
                                file=file, field=f"{where}[{n}]", value=m)
            messages.append((role, content or ""))  # the reference sends a missing content as ''
        bots = tuple(i for i, (role, _) in enumerate(messages) if role == "assistant")
        if not bots:
            raise DataError("the chat has no assistant message, so there is nothing to ask the model for",
                            file=file, field=where, value=len(messages),
                            expected="an assistant message (its content may be '') after each user message")
        return ChatConversation(index, tuple(messages), bots)

    def n_requests(self, conv: ChatConversation, infer_mode: str) -> int:
        return min(len(conv), 1) if infer_mode == "last" else len(conv)

    def prompt(self, conv: ChatConversation, k: int, replies: Sequence[str] | None = None) -> Dialogue:
        """Every message before the ``k``-th assistant message (earlier ones replaced by ``replies`` if given)."""
        if not 0 <= k < len(conv.bots):
            raise DataError(f"request {k} is past the chat's last assistant message", field=f"test[{conv.index}]",
                            value=k)
        begin: list[Any] = []
        rnd: list[Any] = []
        bot = 0
        for role, content in conv.messages[:conv.bots[k]]:
            if role == "assistant":
                if replies is not None and bot < len(replies):
                    content = replies[bot]
                bot += 1
            turn = Turn(_ROLES[role], content)
            # leading system messages are the dialogue's begin (the meta template's reserved SYSTEM role)
            (begin if role == "system" and not rnd else rnd).append(turn)
        items: list[Any] = []
        if begin:
            items += [SectionMark("begin", "begin"), *begin, SectionMark("begin", "end")]
        items += [SectionMark("round", "begin"), *rnd, SectionMark("round", "end")]
        return Dialogue(tuple(items))

    def last_prompt(self, conv: ChatConversation) -> Dialogue:
        return self.prompt(conv, len(conv) - 1)


def chat_turns_inferencer(dataset: Any, model: Any, *, params: Any = None, file: str | None = None) -> Any:
    """The multi-turn loop over the dataset's row chats when its inferencer is ChatInferencer ``every`` /
    ``every_with_gt``, else None (``view`` and the plan both ask)."""
    from promptweave.compat.inferencers import inferencer_name, resolve_inferencer
    from promptweave.forms.turn_loop import MultiTurnGenInferencer

    inf = dataset.inferencer
    if resolve_inferencer(inferencer_name(inf.type), inf.settings, file=file)[0].mode != "chat":
        return None
    field = f"{dataset.field}.reader_cfg" if getattr(dataset, "field", None) else "reader_cfg"
    tpl = ChatDialogueTemplate(dataset.reader.input_columns, file=file or dataset.file, field=field)
    return MultiTurnGenInferencer(dataset, model, params=params, template=tpl)


def chat_prediction(conv: ChatConversation, replies: Sequence[str], *, infer_mode: str,
                    dialogue_mode: bool) -> list[Any]:
    """A row's stored prediction, as the reference stores it.

    ``every`` on a ``dialogue`` column: one ``{'round', 'user', 'assistant'}`` per assistant message, ``user``
    being the message before it (the reference pairs messages two by two, which is the same for the
    user/assistant chats it accepts) and ``assistant`` the model's reply. Otherwise the replies, in order.
    """
    if not (dialogue_mode and infer_mode == "every"):
        return list(replies)
    out = []
    for r, (pos, reply) in enumerate(zip(conv.bots, replies)):
        user = conv.messages[pos - 1][1] if pos > 0 else ""
        out.append({"round": r + 1, "user": user, "assistant": reply})
    return out


__all__ = ["ChatConversation", "ChatDialogueTemplate", "chat_prediction", "chat_turns_inferencer"]
