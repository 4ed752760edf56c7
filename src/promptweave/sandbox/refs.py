"""Inert references: what an import of a class or module becomes inside the sandbox.

They carry a dotted name and nothing else a config could walk: no Python attributes are
reachable from sandboxed code (attribute access goes through the interpreter's allow-list,
and format strings never resolve attributes).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ClassRef:
    """A class or function named in a config (``type=PromptTemplate``): its module and name."""

    module: str
    name: str

    def __call__(self, **kwargs: Any) -> dict[str, Any]:
        return {"type": self, **kwargs}

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<class {self.module}.{self.name}>" if self.module else f"<class {self.name}>"


@dataclass(frozen=True)
class ModuleRef:
    """A module imported by a config that is not one of the sandbox's pure modules: attributes
    of it are class references (``opencompass.models.HuggingFace``)."""

    name: str

    def attr(self, attr: str) -> ClassRef:
        return ClassRef(self.name, attr)

    def __str__(self) -> str:
        return f"<module {self.name}>"

    __repr__ = __str__


class RefName(str):
    """A class or function name as the engine sees it (``'MATHEvaluator'``), remembering the module the config
    imported it from (``.module``): where two references define one name with different rules, the module picks
    (``compat.origin``). It is the plain name everywhere else (comparisons, dict keys, JSON)."""

    module: str

    def __new__(cls, name: str, module: str = "") -> "RefName":
        self = super().__new__(cls, name)
        self.module = module
        return self

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]
        return (str(self), self.module)
