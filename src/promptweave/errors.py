"""Typed errors and warnings: every one names where the fault is.

Each class has a stable ``code`` so scripts and tests can match on it rather
than on wording. ``location`` is a human path such as
``examples/q.py: datasets[0].infer_cfg.prompt_template.template.round[1].role``.
"""
from __future__ import annotations

from typing import Any

_MISSING = object()


class PromptweaveError(Exception):
    """Base of every error promptweave raises on bad input."""

    code = "PW000"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        value: Any = _MISSING,
        expected: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(self._render())

    @property
    def location(self) -> str:
        parts = [p for p in (self.file, self.field) if p]
        return ": ".join(parts)

    def _render(self) -> str:
        text = f"[{self.code}] "
        if self.location:
            text += f"{self.location}: "
        text += self.message
        if self.value is not _MISSING:
            shown = repr(self.value)
            if len(shown) > 120:
                shown = shown[:117] + "..."
            text += f" (got {shown})"
        if self.expected:
            text += f"; expected {self.expected}"
        return text

    def at(self, *, file: str | None = None, prefix: str | None = None) -> "PromptweaveError":
        """Return the same error re-located under a file and/or a parent field path."""
        field = self.field
        if prefix:
            field = prefix + ("" if not field or field.startswith("[") else ".") + (field or "")
        new = type(self).__new__(type(self))
        PromptweaveError.__init__(
            new, self.message, file=file or self.file, field=field, value=self.value, expected=self.expected
        )
        return new


class ConfigError(PromptweaveError):
    """A config file or config value is malformed."""

    code = "PW100"


class TemplateError(ConfigError):
    """A dataset-side prompt template is malformed."""

    code = "PW110"


class RoleError(TemplateError):
    """A dialogue turn names a role the meta template cannot place."""

    code = "PW120"


class MetaTemplateError(ConfigError):
    """A model-side meta template is malformed."""

    code = "PW130"


class DataError(PromptweaveError):
    """Dataset rows are missing, malformed or lack a required column."""

    code = "PW200"


class RetrieverError(PromptweaveError):
    """A retriever was configured or used wrongly."""

    code = "PW300"


class ModelError(PromptweaveError):
    """A model backend failed or was misconfigured."""

    code = "PW400"


class LVEError(PromptweaveError):
    """An LVE test folder or instance is invalid."""

    code = "PW500"


class PromptweaveWarning(UserWarning):
    """Something suspicious that the reference tolerates, so we only warn."""
