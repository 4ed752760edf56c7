"""Run a ``.py`` config as real Python: only when the user opted in (``--trust-config``).

Base configs are read the way OpenCompass (mmengine's ``Config``) reads them: the imports inside
``with read_base():`` — relative ones and ``opencompass.configs...`` / ``ais_bench.benchmark.configs...``
ones — name other config files, which are run the same way and whose variables are bound here
(deep copies, dicts readable by attribute and with ``.deepcopy()``, as mmengine's ConfigDict).
Other imports of the references' packages (``opencompass``, ``ais_bench``, ``mmengine``) resolve to
stand-in modules whose attributes are class references, so configs run without those packages.
Whatever the config raises becomes a typed error naming its file and line.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import importlib.abc
import importlib.machinery
import sys
import traceback
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from promptweave.errors import ConfigError, PromptweaveError
from promptweave.sandbox.imports import REFERENCE_TREES, install_dirs, module_file
from promptweave.sandbox.refs import ClassRef

_SHIMMED = ("opencompass", "ais_bench", "mmengine", "lve")


class ConfigDict(dict):
    """A dict whose keys read as attributes and that copies itself, like mmengine's ConfigDict."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def deepcopy(self) -> ConfigDict:
        return copy.deepcopy(self)

    def copy(self) -> ConfigDict:  # type: ignore[override]
        return ConfigDict(self)


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return ConfigDict({k: _wrap(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    return value


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
    for k in saved:
        del sys.modules[k]
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if k.split(".")[0] in _SHIMMED]:
            del sys.modules[k]
        sys.modules.update(saved)


def _exported(env: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in env.items() if not k.startswith("_")
            and not isinstance(v, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type))}


class TrustedLoader:
    def __init__(self) -> None:
        self.cache: dict[Path, dict[str, Any]] = {}
        self.stack: list[Path] = []

    def load(self, path: Path) -> dict[str, Any]:
        path = path.resolve()
        if path in self.cache:
            return self.cache[path]
        if path in self.stack:
            raise ConfigError("config files import each other in a cycle: " +
                              " -> ".join(p.name for p in self.stack + [path]), file=str(path))
        try:
            source = path.read_text(encoding="utf-8")
            with warnings.catch_warnings():  # "invalid escape sequence" in a config is Python's note to its author
                warnings.simplefilter("ignore", SyntaxWarning)
                tree = ast.parse(source, filename=str(path))
        except SyntaxError as exc:
            raise ConfigError(f"Python syntax error: {exc.msg}", file=f"{path}:{exc.lineno}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read config: {exc}", file=str(path)) from None
        except (RecursionError, MemoryError):
            raise ConfigError("config source nested too deeply to parse", file=str(path)) from None
        env: dict[str, Any] = {"__file__": str(path), "__name__": "__promptweave_config__",
                               "__builtins__": builtins}
        self.stack.append(path)
        try:
            for stmt in tree.body:
                self.run_stmt(stmt, env, path)
        finally:
            self.stack.pop()
        self.cache[path] = env
        return env

    def run_stmt(self, stmt: ast.stmt, env: dict[str, Any], path: Path, in_read_base: bool = False) -> None:
        if isinstance(stmt, ast.With) and all(_is_read_base(i.context_expr) for i in stmt.items):
            for inner in stmt.body:
                self.run_stmt(inner, env, path, in_read_base=True)
            return
        if isinstance(stmt, ast.ImportFrom):
            target = self.config_file(stmt, path, in_read_base)
            if target is not None:
                self.bind(stmt, target, env, path)
                return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            code = compile(ast.Module(body=[stmt], type_ignores=[]), str(path), "exec")
        try:
            exec(code, env)  # noqa: S102 - the user passed --trust-config
        except PromptweaveError:
            raise
        except BaseException as exc:  # the config's own code failed: name where, never a bare traceback
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            line = stmt.lineno
            for frame in reversed(traceback.extract_tb(exc.__traceback__)):
                if frame.filename == str(path) and frame.lineno:
                    line = frame.lineno
                    break
            raise ConfigError(f"running the config (--trust-config) raised {type(exc).__name__}: {exc}"
                              .rstrip(": "), file=f"{path}:{line}") from None

    def config_file(self, node: ast.ImportFrom, path: Path, in_read_base: bool) -> Path | None:
        module = node.module or ""
        where = f"{path}:{node.lineno}"
        if node.level:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            found = module_file(base, module.split(".") if module else [])
            if found is None:
                raise ConfigError(f"config import '{'.' * node.level}{module}' names no file", file=where)
            return found
        trees = REFERENCE_TREES if in_read_base else REFERENCE_TREES[:2]
        if not any(module == p or module.startswith(p + ".") for p in trees):
            return None
        parts = module.split(".")
        for d in install_dirs() + [Path(p) for p in sys.path if p]:
            found = module_file(d, parts)
            if found is not None:
                return found
        raise ConfigError(f"read_base() imports {module!r}, which is not installed (no {'/'.join(parts)}.py in the "
                          "interpreter's package directories)", file=where)

    def bind(self, node: ast.ImportFrom, target: Path, env: dict[str, Any], path: Path) -> None:
        names = _exported(self.load(target)) | {k: v for k, v in self.load(target).items()
                                                  if isinstance(v, types.FunctionType) and not k.startswith("_")}
        for alias in node.names:
            if alias.name == "*":
                for k, v in names.items():
                    env[k] = _wrap(copy.deepcopy(v))
                continue
            if alias.name not in names:
                raise ConfigError(f"{target.name} defines no {alias.name!r}", file=f"{path}:{node.lineno}")
            env[alias.asname or alias.name] = _wrap(copy.deepcopy(names[alias.name]))


def _is_read_base(expr: ast.expr) -> bool:
    return (isinstance(expr, ast.Call) and not expr.args and not expr.keywords
            and ((isinstance(expr.func, ast.Name) and expr.func.id == "read_base")
                 or (isinstance(expr.func, ast.Attribute) and expr.func.attr == "read_base")))


def run_py_config(path: Path) -> dict[str, Any]:
    """Execute the config file (and its base configs) and return its public variables."""
    path = Path(path).resolve()
    with _shims():
        saved_path = list(sys.path)
        sys.path.insert(0, str(path.parent))
        try:
            env = TrustedLoader().load(path)
        except RecursionError:
            raise ConfigError("running the config (--trust-config) recursed too deeply", file=str(path)) from None
        finally:
            sys.path[:] = saved_path
    return _exported(env)
