"""Custom checkers shipped in an LVE folder (``checker/checker.py``), run only when trusted.

Without trust we only read the file's syntax tree (to know the class exists); its code
never runs. With trust it is imported with a small stand-in for the ``lve`` package
(``lve.checkers.base``, ``lve.checkers``, ``lve.prompt``, ``lve.utils.importutils``) so checkers
written against LVE's API find the base classes and helpers they expect.
"""
from __future__ import annotations

import ast
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, Sequence

from promptweave.errors import LVEError
from promptweave.lve import checkers as core
from promptweave.lve.model import Message, Role


class UntrustedCheckerError(LVEError):
    """A custom checker would run code from the test folder, and the user did not opt in."""

    code = "PW560"


def defined_classes(path: Path) -> list[str]:
    """Top-level class names in a checker file, read without running it."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise LVEError(f"custom checker file does not parse: {exc.msg} (line {exc.lineno})", file=str(path)) from None
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


class BaseChecker(core.Checker):
    """LVE-API base class for trusted custom checkers."""

    def __init__(self, extract: str | None = None) -> None:
        super().__init__(extract)

    def extract_response_from_prompt(self, prompt: Sequence[Message], full: bool = False) -> Any:
        return self.response_of(prompt, full)

    def extract_variables_from_prompt(self, prompt: Sequence[Message], full: bool = False) -> dict[str, Any]:
        return self.variables_of(prompt, full)

    def invoke_check(self, prompt_out: Any, param_values: dict[str, Any] | None = None, score_callback: Any = None):
        is_safe = self.is_safe(prompt_out, param_values)
        return is_safe, None

    @classmethod
    def has_post_processing(cls) -> bool:
        return cls.postprocess_response is not core.Checker.postprocess_response

    @classmethod
    def is_multi_run(cls) -> bool:
        return cls.multi_run


class MultiRunBaseChecker(BaseChecker):
    multi_run = True

    def invoke_check(self, prompts_out: Any, param_values: dict[str, Any] | None = None, score_callback: Any = None):
        return self.is_safe(prompts_out, param_values), None


def _ensure_installed(package: str, version: str | None = None) -> None:
    if importlib.util.find_spec(package) is None:
        raise core.NeedsExtraError(f"custom checker needs python package '{package}', which is not installed")


def _compat_modules() -> dict[str, types.ModuleType]:
    base = types.ModuleType("lve.checkers.base")
    for name, value in {"BaseChecker": BaseChecker, "MultiRunBaseChecker": MultiRunBaseChecker, "Role": Role,
                        "Message": Message, "re": __import__("re")}.items():
        setattr(base, name, value)
    for name, cls in core.BUILTIN_CHECKERS.items():
        setattr(base, name, cls)
    base.__all__ = [n for n in vars(base) if not n.startswith("_") and n != "re"]  # type: ignore[attr-defined]
    prompt = types.ModuleType("lve.prompt")
    prompt.Role = Role  # type: ignore[attr-defined]
    prompt.Message = Message  # type: ignore[attr-defined]
    importutils = types.ModuleType("lve.utils.importutils")
    importutils.ensure_installed = _ensure_installed  # type: ignore[attr-defined]
    checkers = types.ModuleType("lve.checkers")
    checkers.__dict__.update({k: v for k, v in vars(base).items() if not k.startswith("__")})
    checkers.base = base  # type: ignore[attr-defined]
    pkg = types.ModuleType("lve")
    pkg.__path__ = []  # type: ignore[attr-defined]
    checkers.__path__ = []  # type: ignore[attr-defined]
    utils = types.ModuleType("lve.utils")
    utils.__path__ = []  # type: ignore[attr-defined]
    utils.importutils = importutils  # type: ignore[attr-defined]
    pkg.checkers, pkg.prompt, pkg.utils = checkers, prompt, utils  # type: ignore[attr-defined]
    return {"lve": pkg, "lve.checkers": checkers, "lve.checkers.base": base, "lve.prompt": prompt,
            "lve.utils": utils, "lve.utils.importutils": importutils}


_loaded: dict[Path, types.ModuleType] = {}


def load_custom_checker(path: Path, name: str) -> type:
    """Import a trusted checker file and return class ``name`` (the ``lve`` stand-in is visible only
    while the file is imported)."""
    path = path.resolve()
    module = _loaded.get(path)
    if module is None:
        shims = _compat_modules()
        saved = {k: sys.modules.get(k) for k in shims}
        sys.modules.update(shims)
        try:
            spec = importlib.util.spec_from_file_location(f"promptweave_lve_custom_{abs(hash(path))}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        finally:
            for key, old in saved.items():
                if old is None:
                    sys.modules.pop(key, None)
                else:
                    sys.modules[key] = old
        _loaded[path] = module
    cls = getattr(module, name, None)
    if not isinstance(cls, type):
        raise LVEError(f"custom checker file defines no class '{name}'", file=str(path), field="checker_args.checker_name")
    return cls
