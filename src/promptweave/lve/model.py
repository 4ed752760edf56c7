"""Typed form of an LVE test once loaded: messages, prompts, runs and the test itself."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

from promptweave.lve.errors import LVECheckError, LVEFillError, LVELoadError
from promptweave.lve.template import Template

__all__ = ["LVECheckError", "LVEFillError", "LVELoadError", "Role", "Message", "PromptSpec", "RunSpec",
           "CheckerSpec", "LVETest"]


class Role(str, Enum):
    user = "user"
    assistant = "assistant"
    system = "system"

    def __str__(self) -> str:
        return self.value


@dataclass
class Message:
    """One chat message of an LVE prompt (``content is None`` on an assistant slot = a model call)."""

    content: str | None
    role: Role = Role.user
    variable: str | None = None
    image_url: str | None = None

    def to_request(self) -> dict[str, Any]:
        """The OpenAI-style chat message sent to a backend."""
        content: Any = self.content
        if self.image_url is not None:
            content = [{"type": "text", "text": self.content},
                       {"type": "image_url", "image_url": self.image_url}]
        return {"role": self.role.value, "content": content}

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role.value, "content": self.content, "variable": self.variable,
                "image_url": self.image_url}

    def copy(self) -> "Message":
        return replace(self)


@dataclass(frozen=True)
class PromptSpec:
    """One conversation template: messages (a final assistant slot already appended) and the
    compiled templates of each non-assistant message's ``content`` / ``image_url``."""

    messages: tuple[Message, ...]
    templates: tuple[tuple[Template | None, Template | None], ...]
    where: str  # field path of the prompt, e.g. "prompt" or "multi_run_prompt[1].prompt"
    file: str  # the file the messages came from (test.json or a .prompt file)
    appended_slot: bool = False

    @property
    def names(self) -> list[str]:
        out: list[str] = []
        for content, image in self.templates:
            for t in (content, image):
                for n in (t.names if t else ()):
                    if n not in out:
                        out.append(n)
        return out


@dataclass(frozen=True)
class RunSpec:
    """One element of ``multi_run_prompt``: its prompt, run ``repetitions`` times in a row."""

    name: str | None
    prompt: PromptSpec
    repetitions: int = 1


@dataclass
class CheckerSpec:
    """Which checker a test uses and its arguments, validated as far as the folder allows."""

    name: str
    args: dict[str, Any]  # raw values from checker_args, checker_name removed
    templates: dict[str, Template]  # string arguments, formatted with the instance args
    builtin: type | None = None  # a class from promptweave.lve.checkers
    custom_file: Path | None = None  # checker/checker.py defining ``name``
    multi_run: bool | None = None  # None: unknown until a custom checker is imported


@dataclass
class LVETest:
    """A loaded, validated LVE test folder."""

    path: Path
    test_file: Path
    description: str
    model: str
    checker: CheckerSpec
    prompt_parameters: tuple[str, ...] | None
    default_model_args: dict[str, Any]
    prompt: PromptSpec | None = None
    runs: tuple[RunSpec, ...] | None = None
    author: str | None = None
    tags: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def multi_run(self) -> bool:
        return self.runs is not None

    def prompts(self) -> list[PromptSpec]:
        """Every conversation template, a multi-run element once per repetition."""
        if self.prompt is not None:
            return [self.prompt]
        assert self.runs is not None
        return [run.prompt for run in self.runs for _ in range(run.repetitions)]

    def instance_files(self) -> list[Path]:
        folder = self.path / "instances"
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.suffix in (".jsonl", ".json") and p.is_file())
