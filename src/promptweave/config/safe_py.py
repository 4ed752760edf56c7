"""Evaluate OpenCompass-style ``.py`` configs without running them, in the shared sandbox.

A config is interpreted by :class:`promptweave.sandbox.Interpreter` (no Python code runs). This
module is the config's side of it: where ``read_base()`` / relative imports lead (only inside the
config's root and the installed reference config trees), which environment variables it read, the
files ``open()`` may read, and what a file exports.
"""
from __future__ import annotations

import ast
import copy
from pathlib import Path
from typing import Any

from promptweave.errors import ConfigError, PromptweaveError, SandboxError
from promptweave.sandbox import (
    BudgetError,
    Function,
    Host,
    Interpreter,
    Meter,
    Namespace,
)
from promptweave.sandbox.budget import DEFAULT_BUDGET, Budget
from promptweave.sandbox.env import read_env
from promptweave.sandbox.imports import (
    REFERENCE_TREES,
    checked,
    module_file,
    reference_roots,
    within,
)
from promptweave.sandbox.refs import ClassRef, ModuleRef

__all__ = ["ClassRef", "ModuleRef", "SafeConfigLoader", "load_py_config"]

_SKIP_EXPORT = (Namespace, ModuleRef)


class SafeConfigLoader:
    """Loads one config and everything it imports, under one budget."""

    def __init__(self, top: Path, *, root: Path | None = None, budget: Budget = DEFAULT_BUDGET) -> None:
        given = Path(top)
        self.root = (Path(root) if root is not None else given.absolute().parent).resolve()
        self.reference_roots = reference_roots()
        self.top = checked(given.absolute(), self.root, str(given), f"the config file {given}")
        self.meter = Meter(budget)
        self.cache: dict[Path, dict[str, Any]] = {}
        self.stack: list[Path] = []
        self.env_reads: dict[str, bool] = {}

    def root_of(self, path: Path) -> Path:
        for root in self.reference_roots.values():
            if within(path, root):
                return root
        return self.root

    def load(self, path: Path | None = None) -> dict[str, Any]:
        path = path or self.top
        if path in self.cache:
            return self.cache[path]
        if path in self.stack:
            raise SandboxError("config files import each other in a cycle: " +
                               " -> ".join(p.name for p in self.stack + [path]), file=str(path))
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SandboxError(f"cannot read config: {exc}", file=str(path)) from None
        host = ConfigHost(self, path)
        interp = Interpreter(str(path), host=host, meter=self.meter)
        tree = interp.parse(source)
        globals_: dict[str, Any] = {"__file__": str(path), "__name__": "__promptweave_config__"}
        self.stack.append(path)
        saved = (self.meter.file, self.meter.line)
        try:
            interp.run_module(tree, globals_)  # type: ignore[arg-type]
        except PromptweaveError:
            raise
        except (RecursionError, MemoryError):
            raise BudgetError("evaluation nested too deeply or built too much (budget max_depth / max_alloc)",
                              file=self.meter.where) from None
        except Exception as exc:  # noqa: BLE001 - the config's own error: KeyError, raise ValueError(...), assert
            raise ConfigError(f"the config raised {type(exc).__name__}: {exc}".rstrip(": "),
                              file=self.meter.where) from None
        finally:
            self.stack.pop()
            self.meter.file, self.meter.line = saved
        exported = {k: v for k, v in globals_.items()
                    if not k.startswith("_") and not isinstance(v, _SKIP_EXPORT)}
        self.cache[path] = exported
        return exported

    # -- imports --------------------------------------------------------------------------
    def resolve(self, node: ast.ImportFrom, importer: Path, in_read_base: bool) -> Path | None:
        """The config file an import names, or None when it names classes in a package."""
        where = f"{importer}:{node.lineno}"
        module = node.module or ""
        dotted = "." * node.level + module
        if node.level:
            root = self.root_of(importer)
            base = importer.parent
            for _ in range(node.level - 1):
                base = base.parent
            if not within(base.resolve(), root):
                raise SandboxError(f"'from {dotted} import ...' climbs above the config's root {root}; safe mode "
                                   "reads only files under the config's own folder and the installed reference "
                                   "config trees (--trust-config runs the import as Python)", file=where)
            found = module_file(base, module.split(".") if module else [])
            if found is None:
                raise SandboxError(f"config import '{dotted}' names no file (looked for "
                                   f"{base.joinpath(*module.split('.')) if module else base}.py)", file=where)
            return checked(found, root, where, f"config import '{dotted}'")
        if not in_read_base:
            return None
        for prefix, root in self.reference_roots.items():
            if module == prefix or module.startswith(prefix + "."):
                rest = module[len(prefix) + 1:].split(".") if module != prefix else []
                found = module_file(root, rest)
                if found is None:
                    raise SandboxError(f"read_base() imports {module!r}, which names no file in {root}", file=where)
                return checked(found, root, where, f"config import '{module}'")
        top = module.split(".")[0]
        if top in ("opencompass", "ais_bench"):
            raise SandboxError(f"read_base() imports {module!r}, but the {top!r} package with its config tree is "
                               "not installed; install it, or copy that config next to this one and import it "
                               "relatively (from .x import y)", file=where)
        raise SandboxError(f"read_base() imports {module!r}: safe mode reads base configs only relative to this "
                           f"config or from the installed reference trees ({', '.join(REFERENCE_TREES)}); "
                           "--trust-config runs the import as Python", file=where)

    def import_from(self, node: ast.ImportFrom, importer: Path, in_read_base: bool) -> dict[str, Any]:
        target = self.resolve(node, importer, in_read_base)
        if target is None:
            out: dict[str, Any] = {}
            for alias in node.names:
                if alias.name == "*":
                    raise SandboxError(f"'from {node.module} import *' names no config file; import the class "
                                       "names you use", file=f"{importer}:{node.lineno}")
                out[alias.asname or alias.name] = ClassRef(node.module or "", alias.name)
            return out
        names = self.load(target)
        out = {}
        for alias in node.names:
            if alias.name == "*":
                out.update({k: _copy(v) for k, v in names.items()})
                continue
            if alias.name not in names:
                raise SandboxError(f"{target.name} defines no {alias.name!r}", file=f"{importer}:{node.lineno}")
            out[alias.asname or alias.name] = _copy(names[alias.name])
        return out


def _copy(value: Any) -> Any:
    return value if isinstance(value, Function) else copy.deepcopy(value)


class ConfigHost(Host):
    """What a config may ask for: imports within its roots, literal-named env vars, files under its roots."""

    trust_hint = "--trust-config would run it as Python"

    def __init__(self, loader: SafeConfigLoader, path: Path) -> None:
        self.loader = loader
        self.path = path

    def import_from(self, interp: Interpreter, node: ast.ImportFrom, in_read_base: bool) -> dict[str, Any]:
        return self.loader.import_from(node, self.path, in_read_base)

    def import_module(self, interp: Interpreter, node: ast.Import, name: str) -> Any:
        return ModuleRef(name)

    def env_get(self, name: Any, default: Any = None) -> Any:
        if not isinstance(name, str):
            raise TypeError("environment variable names are strings")
        return read_env(name, default, file=self.loader.meter.where or None, reads=self.loader.env_reads)

    def _inside(self, path: Any, what: str) -> Path:
        if not isinstance(path, str):
            raise TypeError(f"{what}: a path must be a string")
        p = Path(path)
        p = p if p.is_absolute() else Path.cwd() / p
        real = p.resolve()
        roots = [self.loader.root, *self.loader.reference_roots.values()]
        inside = [r for r in roots if within(real, r)]
        if not inside:
            raise SandboxError(f"{what}({path!r}) looks outside the config's root {self.loader.root}; safe mode "
                               "reads only files under it and the installed reference config trees "
                               "(--trust-config would run it as Python)", file=self.loader.meter.where)
        hidden = [part for part in real.relative_to(inside[0]).parts if part.startswith(".")]
        if hidden or real.parts[1:2] in (("proc",), ("sys",), ("dev",)):
            # dot-folders (.ssh, .aws, .env, .git) and pseudo-files hold credentials, never config data
            raise SandboxError(f"{what}({path!r}) looks at {'a hidden path' if hidden else 'a system pseudo-file'}; "
                               "safe mode never reads those (--trust-config would run it as Python)",
                               file=self.loader.meter.where)
        return real

    def path_exists(self, path: Any) -> bool:
        return self._inside(path, "os.path.exists").exists()

    def path_isfile(self, path: Any) -> bool:
        return self._inside(path, "os.path.isfile").is_file()

    def path_isdir(self, path: Any) -> bool:
        return self._inside(path, "os.path.isdir").is_dir()

    def open_file(self, path: Any, mode: str = "r", encoding: str | None = None) -> str:
        real = self._inside(path, "open")
        if not real.is_file():
            raise FileNotFoundError(f"No such file: {path!r}")
        size = real.stat().st_size
        limit = self.loader.meter.budget.max_file_bytes
        if size > limit:
            raise self.loader.meter.refuse(f"open({path!r}) reads a file of {size} bytes",
                                           f"max_file_bytes={limit}")
        return real.read_text(encoding=encoding or "utf-8")


def load_py_config(path: Path, *, root: Path | None = None, budget: Budget = DEFAULT_BUDGET
                   ) -> tuple[dict[str, Any], dict[str, bool]]:
    """Variables of a ``.py`` config, evaluated safely (no code runs), and the env vars it read."""
    loader = SafeConfigLoader(Path(path), root=root, budget=budget)
    variables = loader.load()
    exported = {k: v for k, v in variables.items() if not isinstance(v, Function)}
    return exported, dict(loader.env_reads)
