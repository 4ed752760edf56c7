"""Run a ``.py`` config as real Python: only when the user opted in (``--trust-config``).

Imports of the references' packages (``opencompass``, ``ais_bench``,
``mmengine``) resolve to stand-in modules whose attributes are ClassRefs, so
existing configs run without those packages installed.
"""
from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import runpy
import sys
import types
from pathlib import Path
from typing import Any, Iterator

from promptweave.config.safe_py import ClassRef
from promptweave.errors import ConfigError

_SHIMMED = ("opencompass", "ais_bench", "mmengine", "lve")


class _ShimModule(types.ModuleType):
    __path__: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "read_base":
            return contextlib.nullcontext
        return ClassRef(self.__name__, name)


class _ShimFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.split(".")[0] in _SHIMMED and fullname not in sys.modules:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        return _ShimModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


@contextlib.contextmanager
def _shims() -> Iterator[None]:
    finder = _ShimFinder()
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] in _SHIMMED}
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if k.split(".")[0] in _SHIMMED]:
            del sys.modules[k]
        sys.modules.update(saved)


def run_py_config(path: Path) -> dict[str, Any]:
    """Execute the config file and return its public variables."""
    path = Path(path).resolve()
    with _shims():
        saved_path = list(sys.path)
        sys.path.insert(0, str(path.parent))
        try:
            env = runpy.run_path(str(path), run_name="__promptweave_config__")
        except SyntaxError as exc:
            raise ConfigError(f"Python syntax error: {exc.msg}", file=f"{path}:{exc.lineno}") from None
        finally:
            sys.path[:] = saved_path
    return {k: v for k, v in env.items() if not k.startswith("_") and not isinstance(v, types.ModuleType)}
