"""Re-check recorded LVE instances offline: their stored responses stand in for the model."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from promptweave.errors import LVEError
from promptweave.lve.model import LVETest, Message, Role
from promptweave.lve.runner import RunResult, execute, prepare
from promptweave.models.base import Backend, GenerationParams


class ScriptedChatModel(Backend):
    """A chat model that answers with a fixed list of replies, in order, and records every
    conversation it is sent. Used to replay recorded responses (and as the stand-in model in
    conformance checks and tests). A chat-only sibling of ``models.scripted.ScriptedModel``, the reference
    backend: it keeps LVE's error when the recording runs out."""

    def __init__(self, replies: Sequence[str], name: str = "scripted") -> None:
        self.replies = list(replies)
        self.name = name
        self.sent: list[list[dict[str, Any]]] = []
        self.params: list[GenerationParams] = []

    def chat(self, conversations: Sequence[Sequence[dict[str, Any]]], params: GenerationParams) -> list[str]:
        out = []
        for conv in conversations:
            if len(self.sent) >= len(self.replies):
                raise LVEError(f"the model was called {len(self.sent) + 1} times but only "
                               f"{len(self.replies)} replies were recorded")
            out.append(self.replies[len(self.sent)])
            self.sent.append([dict(m) for m in conv])
            self.params.append(params)
        return out


def iter_instances(test: LVETest) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """Every recorded instance of a test: (file, 0-based line index among instances, record)."""
    for path in test.instance_files():
        index = 0
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            for lineno, line in enumerate(fh, 1):
                if any("\udc80" <= c <= "\udcff" for c in line):  # undecodable bytes, typed
                    raise LVEError("instance line is not UTF-8 text", file=str(path), field=f"line {lineno}")
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise LVEError(f"instance line is not JSON: {exc}", file=str(path), field=f"line {lineno}") from None
                if not isinstance(record, dict) or not isinstance(record.get("args", {}), dict):
                    raise LVEError("an instance must be an object with 'args'", file=str(path),
                                   field=f"line {lineno}")
                yield path, index, record
                index += 1


def replies_from_response(conversations: Sequence[Sequence[Message]], response: Any, multi_run: bool) -> list[str]:
    """The model replies, in call order, that produced a recorded ``response``."""
    per_run = response if multi_run else [response]
    if not isinstance(per_run, list) or len(per_run) != len(conversations):
        raise LVEError("recorded response does not match the test's runs", field="response", value=response)
    replies: list[str] = []
    for conv, resp in zip(conversations, per_run):
        slots = [m for m in conv if m.role == Role.assistant and m.content is None]
        if isinstance(resp, dict):
            for slot in slots:
                if slot.variable not in resp:
                    raise LVEError(f"recorded response has no value for variable '{slot.variable}'",
                                   field="response", value=sorted(resp))
                replies.append(str(resp[slot.variable]))
        elif isinstance(resp, str):
            if len(slots) > 1:
                raise LVEError("recorded response is one string but the prompt makes several calls",
                               field="response", value=resp)
            replies.extend([resp] * len(slots))
        else:
            raise LVEError("recorded response must be a string or an object of variables", field="response",
                           value=resp)
    return replies


@dataclass
class ReplayOutcome:
    file: Path
    index: int
    recorded: Any
    result: RunResult | None
    error: str | None = None

    @property
    def agrees(self) -> bool | None:
        if self.result is None or self.result.is_safe is None or not isinstance(self.recorded, bool):
            return None
        return self.result.is_safe == self.recorded

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"instances_file": self.file.name, "index": self.index, "recorded_passed": self.recorded}
        if self.result is not None:
            out.update(self.result.to_instance())
        out["agrees"] = self.agrees
        if self.error:
            out["error"] = self.error
        return out


def replay_instance(test: LVETest, record: dict[str, Any], *, trust_checkers: bool = False) -> RunResult:
    prepared = prepare(test, record.get("args", {}), trust_checkers=trust_checkers, skip_unavailable_checker=True)
    replies = replies_from_response(prepared.conversations, record.get("response"), test.multi_run)
    return execute(prepared, ScriptedChatModel(replies, name="replay"))


def replay_test(test: LVETest, *, trust_checkers: bool = False) -> list[ReplayOutcome]:
    """Re-check every recorded instance of ``test``; no model is called."""
    outcomes = []
    for path, index, record in iter_instances(test):
        try:
            result = replay_instance(test, record, trust_checkers=trust_checkers)
            outcomes.append(ReplayOutcome(path, index, record.get("passed"), result))
        except LVEError as exc:
            outcomes.append(ReplayOutcome(path, index, record.get("passed"), None, str(exc)))
    return outcomes
