"""Evaluate OpenCompass-style ``.py`` configs without running their code.

Configs are data written as Python: assignments of dicts and lists, imports of
class names, ``read_base()`` imports of other config files, loops and
comprehensions that build lists of datasets. This module interprets that subset
from the syntax tree. Names imported from other packages become
:class:`ClassRef` s (the config only needs their names); anything else a
config could do (lambdas, arbitrary calls, attribute access into objects) is
refused with an error naming the file and line, unless the user opts into
running the file as real Python (``trust=True``).
"""
from __future__ import annotations

import ast
import copy
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from promptweave.errors import ConfigError


@dataclass(frozen=True)
class ClassRef:
    """A class named in a config (``type=PromptTemplate``): kept as its module and name."""

    module: str
    name: str

    def __call__(self, **kwargs: Any) -> dict[str, Any]:
        return {"type": self, **kwargs}

    def __str__(self) -> str:
        return self.name


class ModuleRef:
    """An imported module: attribute access yields ClassRefs (``opencompass.models.HuggingFace``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def attr(self, attr: str) -> Any:
        return ClassRef(self.name, attr)


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_SAFE_FUNCS: dict[str, Callable[..., Any]] = {
    "dict": dict, "list": list, "tuple": tuple, "set": set, "len": len, "range": range, "zip": zip,
    "enumerate": enumerate, "sorted": sorted, "reversed": reversed, "str": str, "int": int, "float": float,
    "bool": bool, "min": min, "max": max, "sum": sum, "any": any, "all": all, "abs": abs, "round": round,
    "isinstance": isinstance, "deepcopy": copy.deepcopy,
}
_SAFE_METHODS: dict[type, frozenset[str]] = {
    str: frozenset({"format", "join", "replace", "strip", "lstrip", "rstrip", "split", "rsplit", "lower", "upper",
                    "startswith", "endswith", "title", "capitalize", "splitlines"}),
    dict: frozenset({"get", "items", "keys", "values", "copy", "update", "pop", "setdefault"}),
    list: frozenset({"append", "extend", "copy", "index", "insert", "pop", "count"}),
    tuple: frozenset({"index", "count"}),
}
_MAX_STEPS = 2_000_000


class _Return(Exception):
    pass


class SafeConfigInterpreter:
    """Interprets one config file; ``load`` follows ``read_base`` imports of sibling files."""

    def __init__(self, path: Path, *, cache: dict[Path, dict[str, Any]] | None = None,
                 stack: tuple[Path, ...] = ()) -> None:
        self.path = path
        self.cache = cache if cache is not None else {}
        self.stack = stack
        self.steps = 0
        self.in_read_base = 0

    def err(self, node: ast.AST | None, message: str) -> ConfigError:
        line = getattr(node, "lineno", None)
        return ConfigError(message, file=f"{self.path}:{line}" if line else str(self.path))

    def load(self) -> dict[str, Any]:
        if self.path in self.cache:
            return self.cache[self.path]
        if self.path in self.stack:
            raise ConfigError("config files import each other in a cycle", file=str(self.path))
        try:
            source = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read config: {exc.strerror}", file=str(self.path)) from None
        except UnicodeDecodeError as exc:  # reliability: not UTF-8 text
            raise ConfigError(f"the config is not UTF-8 text (byte {exc.start})", file=str(self.path)) from None
        try:
            tree = ast.parse(source, filename=str(self.path))
        except SyntaxError as exc:
            raise ConfigError(f"Python syntax error: {exc.msg}", file=f"{self.path}:{exc.lineno}") from None
        env: dict[str, Any] = {}
        for stmt in tree.body:
            self.exec_stmt(stmt, env)
        result = {k: v for k, v in env.items() if not k.startswith("_") and not isinstance(v, (ModuleRef,))}
        self.cache[self.path] = result
        return result

    # ------------------------------------------------------------------ statements
    def exec_stmt(self, node: ast.stmt, env: dict[str, Any]) -> None:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise self.err(node, "config evaluation takes too many steps")
        if isinstance(node, ast.Assign):
            value = self.eval(node.value, env)
            for target in node.targets:
                self.assign(target, value, env)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.eval(node.value, env), env)
        elif isinstance(node, ast.AugAssign):
            op = _BINOPS.get(type(node.op))
            if op is None or not isinstance(node.target, ast.Name):
                raise self.err(node, "unsupported augmented assignment")
            env[node.target.id] = op(self.lookup(node.target.id, env, node), self.eval(node.value, env))
        elif isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Constant):
                return  # docstring
            self.eval(node.value, env)
        elif isinstance(node, ast.ImportFrom):
            self.import_from(node, env)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                env[(alias.asname or alias.name).split(".")[0]] = ModuleRef(alias.name if alias.asname else
                                                                            alias.name.split(".")[0])
        elif isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "read_base"):
                    raise self.err(node, "only 'with read_base():' blocks are supported in configs")
            self.in_read_base += 1
            try:
                for stmt in node.body:
                    self.exec_stmt(stmt, env)
            finally:
                self.in_read_base -= 1
        elif isinstance(node, ast.For):
            for value in self.eval(node.iter, env):
                self.assign(node.target, value, env)
                for stmt in node.body:
                    self.exec_stmt(stmt, env)
        elif isinstance(node, ast.If):
            for stmt in node.body if self.eval(node.test, env) else node.orelse:
                self.exec_stmt(stmt, env)
        elif isinstance(node, ast.Delete):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    env.pop(t.id, None)
                else:
                    raise self.err(node, "only names can be deleted in configs")
        elif isinstance(node, ast.Pass):
            return
        else:
            raise self.err(node, f"{type(node).__name__} statements are not allowed in a config evaluated safely; "
                                 "pass --trust-config to run it as Python")

    def assign(self, target: ast.expr, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value)
            if len(values) != len(target.elts):
                raise self.err(target, "wrong number of values to unpack")
            for t, v in zip(target.elts, values):
                self.assign(t, v, env)
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value, env)
            if not isinstance(container, (dict, list)):
                raise self.err(target, "only dicts and lists can be assigned into")
            container[self.eval(target.slice, env)] = value
        else:
            raise self.err(target, "unsupported assignment target")

    def import_from(self, node: ast.ImportFrom, env: dict[str, Any]) -> None:
        if node.level:  # relative import: another config file
            base = self.path.parent
            for _ in range(node.level - 1):
                base = base.parent
            mod_path = base.joinpath(*(node.module or "").split(".")) if node.module else base
            candidates = [mod_path.with_suffix(".py"), mod_path / "__init__.py"]
            target = next((c for c in candidates if c.exists()), None)
            if target is None:
                raise self.err(node, f"config import '{'.' * node.level}{node.module or ''}' names no file "
                                     f"(looked for {candidates[0]})")
            self.load_names(target.resolve(), node, env)
            return
        if self.in_read_base:
            # Inside read_base() an absolute import names another config file in an installed
            # package (e.g. opencompass.configs.datasets...): read that file, safely, like a relative one.
            self.load_names(self.package_config(node), node, env)
            return
        for alias in node.names:
            if alias.name == "read_base":
                env[alias.asname or alias.name] = "read_base"
            else:
                env[alias.asname or alias.name] = ClassRef(node.module or "", alias.name)

    def package_config(self, node: ast.ImportFrom) -> Path:
        import importlib.util

        module = node.module or ""
        parts = module.split(".")
        try:
            spec = importlib.util.find_spec(parts[0])
        except (ImportError, ValueError):
            spec = None
        roots = list(spec.submodule_search_locations or []) if spec is not None else []
        for root in roots:
            base = Path(root).joinpath(*parts[1:])
            for cand in (base.with_suffix(".py"), base / "__init__.py"):
                if cand.exists():
                    return cand.resolve()
        if not roots:
            raise self.err(node, f"read_base() imports config module {module!r}, but package {parts[0]!r} is not "
                                 "installed; copy that config next to this one and import it relatively "
                                 "(from .x import y)")
        raise self.err(node, f"read_base() imports config module {module!r}, which names no file in {roots[0]}")

    def load_names(self, target: Path, node: ast.ImportFrom, env: dict[str, Any]) -> None:
        sub = SafeConfigInterpreter(target, cache=self.cache, stack=self.stack + (self.path,)).load()
        for alias in node.names:
            if alias.name == "*":
                env.update(sub)
                continue
            if alias.name not in sub:
                raise self.err(node, f"{target.name} defines no {alias.name!r}")
            env[alias.asname or alias.name] = copy.deepcopy(sub[alias.name])

    # ------------------------------------------------------------------ expressions
    def lookup(self, name: str, env: dict[str, Any], node: ast.AST) -> Any:
        if name in env:
            return env[name]
        if name in _SAFE_FUNCS:
            return _SAFE_FUNCS[name]
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        raise self.err(node, f"name {name!r} is not defined")

    def eval(self, node: ast.expr, env: dict[str, Any]) -> Any:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise self.err(node, "config evaluation takes too many steps")
        t = type(node)
        if t is ast.Constant:
            return node.value
        if t is ast.Name:
            return self.lookup(node.id, env, node)
        if t is ast.List:
            return self._items(node.elts, env)
        if t is ast.Tuple:
            return tuple(self._items(node.elts, env))
        if t is ast.Set:
            return {self.eval(e, env) for e in node.elts}
        if t is ast.Dict:
            out: dict[Any, Any] = {}
            for k, v in zip(node.keys, node.values):
                if k is None:
                    out.update(self.eval(v, env))
                else:
                    out[self.eval(k, env)] = self.eval(v, env)
            return out
        if t is ast.JoinedStr:
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    parts.append(v.value)
                else:
                    val = self.eval(v.value, env)
                    if v.conversion == ord("r"):
                        val = repr(val)
                    elif v.conversion == ord("s"):
                        val = str(val)
                    spec = self.eval(v.format_spec, env) if v.format_spec is not None else ""
                    parts.append(format(val, spec))
            return "".join(parts)
        if t is ast.BinOp:
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise self.err(node, "unsupported operator")
            return op(self.eval(node.left, env), self.eval(node.right, env))
        if t is ast.UnaryOp:
            v = self.eval(node.operand, env)
            if isinstance(node.op, ast.Not):
                return not v
            if isinstance(node.op, ast.USub):
                return -v
            if isinstance(node.op, ast.UAdd):
                return +v
            raise self.err(node, "unsupported unary operator")
        if t is ast.BoolOp:
            if isinstance(node.op, ast.And):
                v: Any = True
                for e in node.values:
                    v = self.eval(e, env)
                    if not v:
                        return v
                return v
            v = False
            for e in node.values:
                v = self.eval(e, env)
                if v:
                    return v
            return v
        if t is ast.Compare:
            left = self.eval(node.left, env)
            for op, comp in zip(node.ops, node.comparators):
                right = self.eval(comp, env)
                if not _CMPOPS[type(op)](left, right):
                    return False
                left = right
            return True
        if t is ast.IfExp:
            return self.eval(node.body if self.eval(node.test, env) else node.orelse, env)
        if t is ast.Subscript:
            container = self.eval(node.value, env)
            if not isinstance(container, (dict, list, tuple, str)):
                raise self.err(node, "only dicts, lists, tuples and strings can be indexed in configs")
            return container[self.eval(node.slice, env)]
        if t is ast.Slice:
            return slice(*(self.eval(x, env) if x is not None else None for x in (node.lower, node.upper, node.step)))
        if t is ast.Attribute:
            base = self.eval(node.value, env)
            if isinstance(base, ModuleRef):
                return base.attr(node.attr)
            if isinstance(base, ClassRef):
                return ClassRef(f"{base.module}.{base.name}", node.attr)
            raise self.err(node, f"attribute access '.{node.attr}' is only allowed for method calls on plain values")
        if t is ast.Call:
            return self.call(node, env)
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            return self.comprehension(node, env)
        raise self.err(node, f"{t.__name__} expressions are not allowed in a config evaluated safely; "
                             "pass --trust-config to run it as Python")

    def _items(self, elts: list[ast.expr], env: dict[str, Any]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                value = self.eval(e.value, env)
                if isinstance(value, (ClassRef, ModuleRef)):
                    raise self.err(e, f"cannot unpack {value.name!r}: it was imported from a package, not a config")
                out.extend(value)
            else:
                out.append(self.eval(e, env))
        return out

    def call(self, node: ast.Call, env: dict[str, Any]) -> Any:
        args = [self.eval(a, env) for a in node.args]
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value, env))
            else:
                kwargs[kw.arg] = self.eval(kw.value, env)
        func = node.func
        if isinstance(func, ast.Attribute):
            base = self.eval(func.value, env)
            if isinstance(base, ModuleRef):
                if base.name == "copy" and func.attr in ("deepcopy", "copy"):
                    return copy.deepcopy(args[0]) if func.attr == "deepcopy" else copy.copy(args[0])
                if args:
                    raise self.err(node, f"calling {base.name}.{func.attr}(...) is not allowed in a config "
                                         "evaluated safely; pass --trust-config to run it as Python")
                return base.attr(func.attr)(**kwargs)
            allowed = _SAFE_METHODS.get(type(base), frozenset())
            if func.attr not in allowed:
                raise self.err(node, f"calling .{func.attr}() on a {type(base).__name__} is not allowed in configs")
            return getattr(base, func.attr)(*args, **kwargs)
        if isinstance(func, ast.Name) and func.id in ("locals", "globals", "vars") and func.id not in env:
            if args or kwargs:
                raise self.err(node, f"{func.id}() takes no arguments in configs")
            return {k: v for k, v in env.items() if not isinstance(v, ModuleRef)}
        f = self.eval(func, env)
        if isinstance(f, ClassRef):
            if args:
                raise self.err(node, f"{f.name}(...) in a config takes keyword arguments only")
            return f(**kwargs)
        if callable(f) and f in _SAFE_FUNCS.values():
            return f(*args, **kwargs)
        raise self.err(node, "only dict(), list() and a few other builtins may be called in configs")

    def comprehension(self, node: Any, env: dict[str, Any]) -> Any:
        results: list[Any] = []
        local = dict(env)

        def gen(i: int) -> None:
            if i == len(node.generators):
                if isinstance(node, ast.DictComp):
                    results.append((self.eval(node.key, local), self.eval(node.value, local)))
                else:
                    results.append(self.eval(node.elt, local))
                return
            g = node.generators[i]
            for value in self.eval(g.iter, local):
                self.assign(g.target, value, local)
                if all(self.eval(c, local) for c in g.ifs):
                    gen(i + 1)

        gen(0)
        if isinstance(node, ast.DictComp):
            return dict(results)
        if isinstance(node, ast.SetComp):
            return set(results)
        return results


def load_py_config(path: Path) -> dict[str, Any]:
    """Variables of a ``.py`` config, evaluated safely (no code runs)."""
    return SafeConfigInterpreter(Path(path).resolve()).load()
