"""The restricted interpreter shared by configs and checker lambdas.

Code is parsed with :mod:`ast` and walked here; nothing is compiled or executed by Python. The
rules, in one place:

- **Values** are plain data (str, int, float, bool, None, bytes, list, tuple, dict, set), inert
  references (:class:`ClassRef`, :class:`ModuleRef`), functions defined by the code itself, and the
  allow-listed functions of :mod:`promptweave.sandbox.modules`.
- **Attributes**: never a name starting with ``_``; otherwise only the methods listed in
  ``METHODS`` for the value's exact type (and a dict's own keys, as mmengine's ConfigDict allows).
  Format strings go through :mod:`promptweave.sandbox.formatting`, which never reads attributes.
- **Calls**: functions defined by the code, allow-listed builtins and module functions, bound
  allow-listed methods, and class references (keyword arguments only: they build ``dict(type=...)``).
- **Budgets** (:class:`~promptweave.sandbox.budget.Budget`) are checked before the work they bound.

Every refusal is a :class:`~promptweave.errors.SandboxError` or
:class:`~promptweave.errors.BudgetError` naming file:line and the form refused. Errors the code
itself raises (``KeyError``, ``raise ValueError(...)``) stay Python exceptions inside the
interpreter, so ``try``/``except`` in the code works; the caller turns an uncaught one into a typed
error.
"""
from __future__ import annotations

import ast
import operator
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import regex

from promptweave.errors import BudgetError, PromptweaveError, SandboxError
from promptweave.sandbox import formatting
from promptweave.sandbox.budget import DEFAULT_BUDGET, Budget, Meter
from promptweave.sandbox.modules import Environ, Namespace, build
from promptweave.sandbox.refs import ClassRef, ModuleRef

TEXT = (str, bytes)
SEQUENCES = (str, bytes, list, tuple)
CONTAINERS = (list, tuple, dict, set, frozenset)

_STR_METHODS = frozenset({
    "lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith",
    "find", "rfind", "index", "rindex", "count", "replace", "join", "isdigit", "isnumeric", "isdecimal",
    "isalpha", "isalnum", "isspace", "islower", "isupper", "istitle", "isidentifier", "isascii", "title",
    "capitalize", "casefold", "swapcase", "partition", "rpartition", "removeprefix", "removesuffix", "encode",
    "format", "format_map", "center", "ljust", "rjust", "zfill", "expandtabs",
})
_SET_METHODS = frozenset({"issubset", "issuperset", "union", "intersection", "difference", "symmetric_difference",
                          "isdisjoint", "copy"})
_REGEX_CALLS = frozenset({"search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"})
METHODS: dict[type, frozenset[str]] = {
    str: _STR_METHODS,
    bytes: frozenset({"decode", "lower", "upper", "strip", "startswith", "endswith", "count", "find", "split"}),
    list: frozenset({"append", "extend", "insert", "pop", "remove", "index", "count", "copy", "sort", "reverse",
                     "clear"}),
    tuple: frozenset({"index", "count"}),
    dict: frozenset({"get", "keys", "values", "items", "copy", "update", "pop", "setdefault", "popitem", "clear",
                     "deepcopy"}),
    set: _SET_METHODS | {"add", "update", "discard", "remove", "pop", "clear"},
    frozenset: _SET_METHODS,
    int: frozenset({"real", "imag", "bit_length", "numerator", "denominator"}),
    bool: frozenset({"real", "imag"}),
    float: frozenset({"real", "imag", "is_integer"}),
    regex.Match: frozenset({"group", "groups", "groupdict", "start", "end", "span", "string"}),
    regex.Pattern: _REGEX_CALLS | {"pattern", "flags"},
}
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add"})

_EXCEPTIONS: dict[str, type[BaseException]] = {e.__name__: e for e in (
    Exception, ValueError, KeyError, TypeError, IndexError, LookupError, ArithmeticError, ZeroDivisionError,
    AssertionError, NotImplementedError, RuntimeError, AttributeError, OverflowError, StopIteration)}


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_CONTROL = (_Return, _Break, _Continue, PromptweaveError)


class Host:
    """What sandboxed code may ask of the outside world. The base host grants nothing."""

    trust_hint = "no flag runs it"

    def env_get(self, name: Any, default: Any = None) -> Any:
        raise SandboxError("reading environment variables is not allowed here")

    def path_exists(self, path: Any) -> bool:
        raise SandboxError("looking at the filesystem is not allowed here")

    path_isfile = path_isdir = path_exists

    def open_file(self, path: Any, mode: str = "r", encoding: str | None = None) -> Any:
        raise SandboxError("reading files is not allowed here")

    def import_from(self, interp: Interpreter, node: ast.ImportFrom, in_read_base: bool) -> dict[str, Any]:
        raise interp.refuse(node, "import statements")

    def import_module(self, interp: Interpreter, node: ast.Import, name: str) -> Any:
        raise interp.refuse(node, "import statements")

    def globals(self) -> dict[str, Any]:
        return {}


class Scope:
    """Variables of a module, a function call or a comprehension; ``parent`` is the enclosing scope."""

    __slots__ = ("global_names", "nonlocal_names", "parent", "vars")

    def __init__(self, vars: dict[str, Any], parent: Scope | None = None) -> None:
        self.vars = vars
        self.parent = parent
        self.global_names: set[str] = set()
        self.nonlocal_names: set[str] = set()

    def module(self) -> Scope:
        s = self
        while s.parent is not None:
            s = s.parent
        return s


class Function:
    """A ``def`` or ``lambda`` of the sandboxed code; calling it interprets its body."""

    def __init__(self, interp: Interpreter, node: ast.FunctionDef | ast.Lambda, scope: Scope,
                 defaults: list[Any], kw_defaults: list[Any]) -> None:
        self.interp = interp
        self.node = node
        self.scope = scope
        self.defaults = defaults
        self.kw_defaults = kw_defaults
        self.__name__ = getattr(node, "name", "<lambda>")

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"

    def __deepcopy__(self, memo: Any) -> Function:
        return self  # a function is shared, never copied (copying would copy the interpreter)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.interp.call_function(self, args, kwargs)


class BoundMethod:
    """An allow-listed method of a plain value, taken as a value (``f = items.append``)."""

    def __init__(self, obj: Any, name: str) -> None:
        self.obj = obj
        self.name = name

    def __repr__(self) -> str:
        return f"<method {type(self.obj).__name__}.{self.name}>"

    def __deepcopy__(self, memo: Any) -> BoundMethod:
        return self


class OpenFile:
    """A text file opened read-only by ``open()``: ``read()``, ``readlines()``, iteration, ``with``."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return "<file>"


def bind_arguments(spec: ast.arguments, args: tuple, kwargs: dict[str, Any], defaults: list[Any],
                   kw_defaults: list[Any], name: str) -> dict[str, Any]:
    """Bind call arguments to parameters like Python does (TypeError on a mismatch)."""
    positional = [a.arg for a in spec.posonlyargs + spec.args]
    bound: dict[str, Any] = {}
    if len(args) > len(positional) and spec.vararg is None:
        raise TypeError(f"{name}() takes {len(positional)} positional arguments but {len(args)} were given")
    for pname, value in zip(positional, args):
        bound[pname] = value
    if spec.vararg is not None:
        bound[spec.vararg.arg] = tuple(args[len(positional):])
    extra: dict[str, Any] = {}
    kwonly = [a.arg for a in spec.kwonlyargs]
    posonly = {a.arg for a in spec.posonlyargs}
    for key, value in kwargs.items():
        if key in bound and key not in posonly:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        if (key in positional and key not in posonly) or key in kwonly:
            bound[key] = value
        elif spec.kwarg is not None:
            extra[key] = value
        else:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    first_default = len(positional) - len(defaults)
    for i, pname in enumerate(positional):
        if pname not in bound:
            if i >= first_default:
                bound[pname] = defaults[i - first_default]
            else:
                raise TypeError(f"{name}() missing required argument: '{pname}'")
    for arg, default in zip(spec.kwonlyargs, kw_defaults):
        if arg.arg not in bound:
            if default is NO_DEFAULT:
                raise TypeError(f"{name}() missing required keyword-only argument: '{arg.arg}'")
            bound[arg.arg] = default
    if spec.kwarg is not None:
        bound[spec.kwarg.arg] = extra
    return bound


NO_DEFAULT = object()

_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
}


class Interpreter:
    """Walks one file's syntax tree (a module or a single expression) under one :class:`Meter`."""

    def __init__(self, file: str, *, host: Host | None = None, budget: Budget = DEFAULT_BUDGET,
                 meter: Meter | None = None) -> None:
        self.file = file
        self.host = host or Host()
        self.meter = meter or Meter(budget)
        self.meter.file = file
        self.modules = build(self)
        self.builtins = self._builtins()
        self.in_read_base = 0
        self._max_steps = self.meter.budget.max_steps
        self._max_depth = self.meter.budget.max_depth
        self._dispatch = {getattr(ast, name[2:]): getattr(self, name) for name in dir(self)
                          if name.startswith("e_") and hasattr(ast, name[2:])}
        self._stmt_dispatch = {getattr(ast, name[2:]): getattr(self, name) for name in dir(self)
                               if name.startswith("s_") and hasattr(ast, name[2:])}

    # ------------------------------------------------------------------ errors
    def refuse(self, node: ast.AST | None, form: str, why: str = "is not allowed in safe mode") -> SandboxError:
        line = getattr(node, "lineno", None) or self.meter.line
        return SandboxError(f"{form} {why} ({self.host.trust_hint})".replace("  ", " "),
                            file=f"{self.file}:{line}" if line else self.file)

    def at(self, node: ast.AST) -> None:
        line = getattr(node, "lineno", None)
        if line:
            self.meter.file = self.file
            self.meter.line = line

    # ------------------------------------------------------------------ entry points
    def parse(self, source: str, mode: str = "exec") -> ast.AST:
        try:
            with warnings.catch_warnings():  # e.g. "invalid escape sequence": Python's own note, not ours to print
                warnings.simplefilter("ignore", SyntaxWarning)
                return ast.parse(source, filename=self.file, mode=mode)
        except SyntaxError as exc:
            raise SandboxError(f"Python syntax error: {exc.msg}", file=f"{self.file}:{exc.lineno}") from None
        except (RecursionError, MemoryError):
            raise BudgetError("the source is nested too deeply to parse (budget max_depth)", file=self.file) from None

    def run_module(self, tree: ast.Module, globals_: dict[str, Any]) -> dict[str, Any]:
        scope = Scope(globals_)
        self.exec_block(tree.body, scope)
        return globals_

    def eval_expression(self, node: ast.expr, variables: dict[str, Any] | None = None) -> Any:
        return self.eval(node, Scope(dict(variables or {})))

    # ------------------------------------------------------------------ statements
    def exec_block(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self.exec_stmt(stmt, scope)

    def exec_stmt(self, node: ast.stmt, scope: Scope) -> None:
        meter = self.meter
        meter.steps += 1
        if meter.steps > self._max_steps or not meter.steps & 0x3FF:
            meter.tick(0)
        meter.file = self.file
        meter.line = node.lineno
        method = self._stmt_dispatch.get(type(node))
        if method is None:
            raise self.refuse(node, f"'{type(node).__name__}' statements")
        method(node, scope)

    def s_Expr(self, node: ast.Expr, scope: Scope) -> None:
        if isinstance(node.value, ast.Constant):
            return  # a docstring
        self.eval(node.value, scope)

    def s_Pass(self, node: ast.Pass, scope: Scope) -> None:
        return None

    def s_Assign(self, node: ast.Assign, scope: Scope) -> None:
        value = self.eval(node.value, scope)
        for target in node.targets:
            self.assign(target, value, scope)

    def s_AnnAssign(self, node: ast.AnnAssign, scope: Scope) -> None:
        if node.value is not None:
            self.assign(node.target, self.eval(node.value, scope), scope)

    def s_AugAssign(self, node: ast.AugAssign, scope: Scope) -> None:
        target = node.target
        if isinstance(target, ast.Name):
            current = self.lookup(target.id, scope, target)
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value, scope)
            key = self.eval(target.slice, scope)
            current = self.subscript(container, key, target)
        else:
            raise self.refuse(node, "augmented assignment to an attribute")
        operand = self.eval(node.value, scope)
        if isinstance(current, list) and isinstance(node.op, ast.Add):
            # `items += more` extends the same list, as Python does (other names bound to it see the change)
            more = list(self.iterate(operand, node))
            self.meter.check_len(len(current) + len(more), "'+='", text=False)
            self.meter.alloc(len(more))
            current.extend(more)
            value = current
        else:
            value = self.binop(node.op, current, operand, node)
        if isinstance(target, ast.Name):
            self.store(target.id, value, scope)
        else:
            self.set_item(container, key, value, target)

    def s_Delete(self, node: ast.Delete, scope: Scope) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                owner = self._owner(target.id, scope)
                if target.id not in owner.vars:
                    raise NameError(f"name '{target.id}' is not defined")
                del owner.vars[target.id]
            elif isinstance(target, ast.Subscript):
                container = self.eval(target.value, scope)
                if not isinstance(container, (dict, list)):
                    raise self.refuse(target, f"deleting an item of a {type(container).__name__}")
                del container[self.eval(target.slice, scope)]
            else:
                raise self.refuse(target, "deleting an attribute")

    def s_If(self, node: ast.If, scope: Scope) -> None:
        self.exec_block(node.body if self.truth(self.eval(node.test, scope)) else node.orelse, scope)

    def _loop_body(self, body: list[ast.stmt], scope: Scope) -> bool:
        """Run one pass of a loop body; False when it ``break``s (``continue`` just ends the pass)."""
        try:
            self.exec_block(body, scope)
        except _Break:
            return False
        except _Continue:
            pass
        return True

    def s_For(self, node: ast.For, scope: Scope) -> None:
        for value in self.iterate(self.eval(node.iter, scope), node):
            self.assign(node.target, value, scope)
            if not self._loop_body(node.body, scope):
                return
        self.exec_block(node.orelse, scope)

    def s_While(self, node: ast.While, scope: Scope) -> None:
        while self.truth(self.eval(node.test, scope)):
            self.meter.tick()
            if not self._loop_body(node.body, scope):
                return
        self.exec_block(node.orelse, scope)

    def s_Break(self, node: ast.Break, scope: Scope) -> None:
        raise _Break()

    def s_Continue(self, node: ast.Continue, scope: Scope) -> None:
        raise _Continue()

    def s_Return(self, node: ast.Return, scope: Scope) -> None:
        if scope.parent is None:
            raise self.refuse(node, "'return' outside a function")
        raise _Return(None if node.value is None else self.eval(node.value, scope))

    def s_Global(self, node: ast.Global, scope: Scope) -> None:
        scope.global_names.update(node.names)

    def s_Nonlocal(self, node: ast.Nonlocal, scope: Scope) -> None:
        scope.nonlocal_names.update(node.names)

    def s_Assert(self, node: ast.Assert, scope: Scope) -> None:
        if not self.truth(self.eval(node.test, scope)):
            msg = self.eval(node.msg, scope) if node.msg is not None else None
            raise AssertionError(*(() if msg is None else (msg,)))

    def s_Raise(self, node: ast.Raise, scope: Scope) -> None:
        if node.exc is None:
            raise self.refuse(node, "a bare 'raise'")
        exc = self.eval(node.exc, scope)
        if isinstance(exc, type) and exc in _EXCEPTIONS.values():
            exc = exc()
        if not isinstance(exc, tuple(_EXCEPTIONS.values())):
            raise self.refuse(node, f"raising a {type(exc).__name__}")
        raise exc

    def s_Try(self, node: ast.Try, scope: Scope) -> None:
        try:
            try:
                self.exec_block(node.body, scope)
            except _CONTROL:
                raise
            except (RecursionError, MemoryError):
                raise
            except Exception as exc:
                for handler in node.handlers:
                    if handler.type is None or isinstance(exc, self._handler_types(handler.type, scope)):
                        if handler.name:
                            self.store(handler.name, exc, scope)
                        self.exec_block(handler.body, scope)
                        break
                else:
                    raise
            else:
                self.exec_block(node.orelse, scope)
        finally:
            self.exec_block(node.finalbody, scope)

    def _handler_types(self, node: ast.expr, scope: Scope) -> tuple[type, ...]:
        value = self.eval(node, scope)
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if v not in _EXCEPTIONS.values():
                raise self.refuse(node, f"'except {v}'", "names no exception class the sandbox knows")
        return tuple(values)

    def s_FunctionDef(self, node: ast.FunctionDef, scope: Scope) -> None:
        if node.decorator_list:
            raise self.refuse(node, "decorated functions")
        self.store(node.name, self.make_function(node, scope), scope)

    def s_With(self, node: ast.With, scope: Scope) -> None:
        if all(self._is_read_base(item.context_expr) for item in node.items):
            self.in_read_base += 1
            try:
                self.exec_block(node.body, scope)
            finally:
                self.in_read_base -= 1
            return
        for item in node.items:
            value = self.eval(item.context_expr, scope)
            if not isinstance(value, OpenFile):
                raise self.refuse(item.context_expr, f"'with' on a {type(value).__name__}",
                                  "is not allowed in safe mode (only 'with read_base():' and 'with open(...)')")
            if item.optional_vars is not None:
                self.assign(item.optional_vars, value, scope)
        self.exec_block(node.body, scope)

    def _is_read_base(self, expr: ast.expr) -> bool:
        return (isinstance(expr, ast.Call) and not expr.args and not expr.keywords
                and ((isinstance(expr.func, ast.Name) and expr.func.id == "read_base")
                     or (isinstance(expr.func, ast.Attribute) and expr.func.attr == "read_base")))

    def s_Import(self, node: ast.Import, scope: Scope) -> None:
        for alias in node.names:
            if alias.asname:
                value = self._module(alias.name, node)
                self.store(alias.asname, value, scope)
            else:
                top = alias.name.split(".")[0]
                self.store(top, self._module(top, node), scope)

    def _module(self, name: str, node: ast.Import) -> Any:
        if name in self.modules:
            return self.modules[name]
        if name.split(".")[0] in ("os", "sys", "subprocess", "builtins", "importlib", "io", "shutil", "socket",
                                  "pathlib", "ctypes", "pickle", "marshal", "runpy", "inspect", "gc"):
            raise self.refuse(node, f"'import {name}'",
                              "is not allowed in safe mode: only os.path, os.environ.get / os.getenv, math, "
                              "itertools, copy, json, re and string functions are reachable")
        return self.host.import_module(self, node, name)

    def s_ImportFrom(self, node: ast.ImportFrom, scope: Scope) -> None:
        module = node.module or ""
        if not node.level and module in self.modules and not self.in_read_base:
            ns = self.modules[module]
            for alias in node.names:
                if alias.name == "*":
                    raise self.refuse(node, f"'from {module} import *'")
                if alias.name not in ns.members:
                    raise self.refuse(node, f"'{module}.{alias.name}'", "is not one of the functions safe mode "
                                      f"allows (allowed: {', '.join(sorted(ns.members))})")
                self.store(alias.asname or alias.name, ns.members[alias.name], scope)
            return
        if not node.level and module.split(".")[0] in ("os", "sys", "subprocess", "builtins", "importlib"):
            raise self.refuse(node, f"'from {module} import ...'")
        names = self.host.import_from(self, node, bool(self.in_read_base))
        for key, value in names.items():
            self.store(key, value, scope)

    def s_ClassDef(self, node: ast.ClassDef, scope: Scope) -> None:
        raise self.refuse(node, f"class definitions ('class {node.name}')")

    # ------------------------------------------------------------------ names and assignment
    def _owner(self, name: str, scope: Scope) -> Scope:
        if name in scope.global_names:
            return scope.module()
        if name in scope.nonlocal_names:
            s = scope.parent
            while s is not None and name not in s.vars:
                s = s.parent
            if s is None:
                raise SyntaxError(f"no binding for nonlocal '{name}' found")
            return s
        return scope

    def store(self, name: str, value: Any, scope: Scope) -> None:
        if name.startswith("__") and name.endswith("__"):
            raise self.refuse(None, f"assigning the name '{name}'")
        self._owner(name, scope).vars[name] = value

    def lookup(self, name: str, scope: Scope, node: ast.AST) -> Any:
        s: Scope | None = scope
        while s is not None:
            if name in s.vars:
                return s.vars[name]
            s = s.parent
        if name in self.builtins:
            return self.builtins[name]
        if name.startswith("_"):
            raise self.refuse(node, f"the name '{name}'")
        if name in ("eval", "exec", "open", "getattr", "setattr", "delattr", "hasattr", "vars", "dir", "type",
                    "object", "super", "compile", "__import__", "input", "breakpoint", "memoryview", "id",
                    "classmethod", "staticmethod", "property", "iter", "next", "callable", "help"):
            raise self.refuse(node, f"the builtin '{name}'")
        raise NameError(f"name '{name}' is not defined")

    def assign(self, target: ast.expr, value: Any, scope: Scope) -> None:
        if isinstance(target, ast.Name):
            self.store(target.id, value, scope)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(self.iterate(value, target))
            starred = [i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if starred:
                i = starred[0]
                after = len(target.elts) - i - 1
                if len(values) < len(target.elts) - 1:
                    raise ValueError(f"not enough values to unpack (expected at least {len(target.elts) - 1}, "
                                     f"got {len(values)})")
                for t, v in zip(target.elts[:i], values[:i]):
                    self.assign(t, v, scope)
                self.assign(target.elts[i].value, values[i:len(values) - after], scope)  # type: ignore[attr-defined]
                for t, v in zip(target.elts[i + 1:], values[len(values) - after:]):
                    self.assign(t, v, scope)
                return
            if len(values) != len(target.elts):
                raise ValueError(f"cannot unpack {len(values)} values into {len(target.elts)} targets")
            for t, v in zip(target.elts, values):
                self.assign(t, v, scope)
        elif isinstance(target, ast.Subscript):
            self.set_item(self.eval(target.value, scope), self.eval(target.slice, scope), value, target)
        elif isinstance(target, ast.Attribute):
            raise self.refuse(target, f"assigning the attribute '.{target.attr}'")
        else:
            raise self.refuse(target, f"assigning to a {type(target).__name__}")

    def set_item(self, container: Any, key: Any, value: Any, node: ast.AST) -> None:
        if not isinstance(container, (dict, list)):
            raise self.refuse(node, f"assigning an item of a {type(container).__name__}")
        container[key] = value
        if isinstance(container, dict):
            self.meter.check_len(len(container), "item assignment", text=False)

    # ------------------------------------------------------------------ expressions
    def eval(self, node: ast.AST, scope: Scope) -> Any:
        t = type(node)
        if t is ast.Constant:
            return node.value  # type: ignore[attr-defined]
        meter = self.meter
        meter.steps += 1
        if meter.steps > self._max_steps or not meter.steps & 0x3FF:
            meter.tick(0)
        if t is ast.Name:
            return self.lookup(node.id, scope, node)  # type: ignore[attr-defined]
        meter.depth += 1
        if meter.depth > self._max_depth:
            meter.depth -= 1
            meter.enter()
        try:
            method = self._dispatch.get(t)
            if method is None:
                raise self.refuse(node, f"'{t.__name__}' expressions")
            return method(node, scope)
        finally:
            meter.depth -= 1

    def e_Constant(self, node: ast.Constant, scope: Scope) -> Any:
        return node.value

    def e_Name(self, node: ast.Name, scope: Scope) -> Any:
        return self.lookup(node.id, scope, node)

    def e_List(self, node: ast.List, scope: Scope) -> Any:
        return self.sized(list(self.items(node.elts, scope)), node)

    def e_Tuple(self, node: ast.Tuple, scope: Scope) -> Any:
        return self.sized(tuple(self.items(node.elts, scope)), node)

    def e_Set(self, node: ast.Set, scope: Scope) -> Any:
        return self.sized(set(self.items(node.elts, scope)), node)

    def e_Dict(self, node: ast.Dict, scope: Scope) -> Any:
        out: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                extra = self.eval(value, scope)
                if not isinstance(extra, dict):
                    raise TypeError(f"'{type(extra).__name__}' object is not a mapping")
                out.update(extra)
            else:
                out[self.eval(key, scope)] = self.eval(value, scope)
        return self.sized(out, node)

    def items(self, elts: list[ast.expr], scope: Scope) -> Iterator[Any]:
        for elt in elts:
            if isinstance(elt, ast.Starred):
                value = self.eval(elt.value, scope)
                if isinstance(value, (ClassRef, ModuleRef)):
                    raise self.refuse(elt, f"unpacking '{value}'", "is not possible: it was imported from a "
                                      "package, not from a config file")
                yield from self.iterate(value, elt)
            else:
                yield self.eval(elt, scope)

    def e_JoinedStr(self, node: ast.JoinedStr, scope: Scope) -> Any:
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(v.value)
            else:
                parts.append(self.e_FormattedValue(v, scope))  # type: ignore[arg-type]
        out = "".join(parts)
        self.meter.check_len(len(out), "f-string", text=True)
        return out

    def e_FormattedValue(self, node: ast.FormattedValue, scope: Scope) -> Any:
        value = self.eval(node.value, scope)
        spec = self.eval(node.format_spec, scope) if node.format_spec is not None else ""
        conversion = None if node.conversion == -1 else chr(node.conversion)
        return formatting.format_value(self.meter, value, spec, conversion)

    def e_BinOp(self, node: ast.BinOp, scope: Scope) -> Any:
        return self.binop(node.op, self.eval(node.left, scope), self.eval(node.right, scope), node)

    def binop(self, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
        t = type(op)
        if type(a) is int and type(b) is int and (t is ast.Add or t is ast.Sub):
            return a + b if t is ast.Add else a - b  # bounded by the operands: no check needed
        meter = self.meter
        if t is ast.Add:
            if isinstance(a, SEQUENCES) and isinstance(b, SEQUENCES):
                meter.check_len(len(a) + len(b), "'+'", text=isinstance(a, TEXT))
            result = a + b
        elif t is ast.Mult:
            for seq, k in ((a, b), (b, a)):
                if isinstance(seq, SEQUENCES) and isinstance(k, int):
                    meter.check_len(len(seq) * max(k, 0), "sequence repetition '*'", text=isinstance(seq, TEXT))
            if isinstance(a, int) and isinstance(b, int):
                meter.check_int_bits(a.bit_length() + b.bit_length(), "'*'")
            result = a * b
        elif t is ast.Pow:
            result = self.power(a, b)
        elif t is ast.LShift:
            if isinstance(a, int) and isinstance(b, int) and a:
                meter.check_int_bits(a.bit_length() + max(b, 0), "'<<'")
            result = a << b
        elif t is ast.Mod:
            if isinstance(a, (str, bytes)):
                result = formatting.safe_percent(meter, lambda why: self.refuse(node, why, ""), a, b)
            else:
                result = a % b
        elif t is ast.Sub:
            result = a - b
        elif t is ast.Div:
            result = a / b
        elif t is ast.FloorDiv:
            result = a // b
        elif t is ast.RShift:
            result = a >> b
        elif t is ast.BitOr:
            result = a | b
        elif t is ast.BitAnd:
            result = a & b
        elif t is ast.BitXor:
            result = a ^ b
        else:
            raise self.refuse(node, f"the operator {t.__name__}")
        if isinstance(result, (ClassRef, ModuleRef)):
            raise self.refuse(node, "arithmetic on class references")
        return self.sized(result, node)

    def power(self, a: Any, b: Any, mod: Any = None) -> Any:
        if isinstance(a, int) and isinstance(b, int) and mod is None and b > 0 and abs(a) > 1:
            self.meter.check_int_bits(a.bit_length() * b, "'**'")
        return pow(a, b) if mod is None else pow(a, b, mod)

    def sized(self, value: Any, node: ast.AST | None = None) -> Any:
        tv = type(value)
        if tv is int or tv is float or tv is bool or value is None:
            return value
        if isinstance(value, TEXT):
            self.meter.check_len(len(value), "a string", text=True)
            self.meter.alloc(len(value))
        elif isinstance(value, CONTAINERS):
            self.meter.check_len(len(value), "a container", text=False)
            self.meter.alloc(len(value))
        return value

    def e_UnaryOp(self, node: ast.UnaryOp, scope: Scope) -> Any:
        return _UNARY[type(node.op)](self.eval(node.operand, scope))

    def e_BoolOp(self, node: ast.BoolOp, scope: Scope) -> Any:
        result: Any = None
        for value in node.values:
            result = self.eval(value, scope)
            truth = self.truth(result)
            if isinstance(node.op, ast.And) and not truth:
                return result
            if isinstance(node.op, ast.Or) and truth:
                return result
        return result

    def truth(self, value: Any) -> bool:
        return bool(value)

    def e_Compare(self, node: ast.Compare, scope: Scope) -> Any:
        left = self.eval(node.left, scope)
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, scope)
            if isinstance(right, Environ) and type(op) in (ast.In, ast.NotIn):
                found = self.env_read(node.left, left, _MISSING) is not _MISSING
                ok = found if type(op) is ast.In else not found
            else:
                ok = _CMP[type(op)](left, right)
            if not ok:
                return False
            left = right
        return True

    def e_IfExp(self, node: ast.IfExp, scope: Scope) -> Any:
        return self.eval(node.body if self.truth(self.eval(node.test, scope)) else node.orelse, scope)

    def e_Subscript(self, node: ast.Subscript, scope: Scope) -> Any:
        container = self.eval(node.value, scope)
        if isinstance(container, Environ):
            value = self.env_read(node.slice, None, _MISSING)
            if value is _MISSING:
                raise KeyError(getattr(node.slice, "value", "?"))
            return value
        return self.subscript(container, self.eval(node.slice, scope), node)

    def subscript(self, container: Any, key: Any, node: ast.AST) -> Any:
        if any(container is t for t in (dict, list, tuple, set, frozenset)):
            return container  # a type annotation such as dict[str, list[str]]: calling it builds the plain type
        if not isinstance(container, (dict, list, tuple, str, bytes, range)) and not isinstance(container, regex.Match):
            raise self.refuse(node, f"indexing a {type(container).__name__}")
        return self.sized(container[key], node)

    def e_Slice(self, node: ast.Slice, scope: Scope) -> Any:
        part = lambda n: None if n is None else self.eval(n, scope)
        return slice(part(node.lower), part(node.upper), part(node.step))

    def e_Attribute(self, node: ast.Attribute, scope: Scope) -> Any:
        return self.attribute(self.eval(node.value, scope), node.attr, node)

    def attribute(self, base: Any, name: str, node: ast.AST) -> Any:
        if name.startswith("_"):
            raise self.refuse(node, f"the attribute '.{name}'", "is not allowed: dunder and private attributes "
                              "are never reachable in safe mode")
        if isinstance(base, Namespace):
            if name not in base.members:
                raise self.refuse(node, f"'{base.name}.{name}'", "is not one of the functions safe mode allows "
                                  f"(allowed: {', '.join(sorted(base.members))})")
            return base.members[name]
        if isinstance(base, Environ):
            if name != "get":
                raise self.refuse(node, f"'os.environ.{name}'", "is not allowed (only os.environ.get('NAME'))")
            return BoundMethod(base, name)
        if isinstance(base, ModuleRef):
            return base.attr(name)
        if isinstance(base, ClassRef):
            return ClassRef(f"{base.module}.{base.name}" if base.module else base.name, name)
        allowed = METHODS.get(type(base))
        if allowed is not None and name in allowed:
            if isinstance(base, (int, float, regex.Match, regex.Pattern)) and name in (
                    "real", "imag", "numerator", "denominator", "string", "pattern", "flags"):
                return getattr(base, name)
            return BoundMethod(base, name)
        if isinstance(base, dict) and name in base:
            return base[name]  # mmengine's ConfigDict reads keys as attributes
        if isinstance(base, OpenFile) and name in ("read", "readlines"):
            return BoundMethod(base, name)
        raise self.refuse(node, f"the attribute '.{name}' of a {type(base).__name__}")

    def e_Lambda(self, node: ast.Lambda, scope: Scope) -> Any:
        return self.make_function(node, scope)

    def make_function(self, node: ast.FunctionDef | ast.Lambda, scope: Scope) -> Function:
        args = node.args
        defaults = [self.eval(d, scope) for d in args.defaults]
        kw_defaults = [NO_DEFAULT if d is None else self.eval(d, scope) for d in args.kw_defaults]
        return Function(self, node, scope, defaults, kw_defaults)

    def call_function(self, fn: Function, args: tuple, kwargs: dict[str, Any]) -> Any:
        self.meter.tick()
        self.meter.enter()
        saved_line = self.meter.line
        try:
            bound = bind_arguments(fn.node.args, args, kwargs, fn.defaults, fn.kw_defaults, fn.__name__)
            scope = Scope(bound, fn.scope)
            if isinstance(fn.node, ast.Lambda):
                return self.eval(fn.node.body, scope)
            try:
                self.exec_block(fn.node.body, scope)
            except _Return as ret:
                return ret.value
            return None
        finally:
            self.meter.leave()
            self.meter.line = saved_line

    # comprehensions: lazy generators (so all()/any() short-circuit), eager lists/sets/dicts
    def _gen(self, generators: list[ast.comprehension], scope: Scope, node: ast.AST,
             outer: int = 1) -> Iterator[Scope]:
        if not generators:
            yield scope
            return
        first, rest = generators[0], generators[1:]
        if first.is_async:
            raise self.refuse(node, "async comprehensions")
        iterable = self.eval(first.iter, scope)
        size = len(iterable) if isinstance(iterable, (range, list, tuple, dict, set, str)) else None
        if size is not None and outer and isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp)):
            # a list built by nested loops: refuse the product of their sizes before building any of it
            self.meter.check_len(outer * size, f"a {type(node).__name__}", text=False)
        inner_outer = outer * size if size is not None and not first.ifs and outer else 0
        for item in self.iterate(iterable, node):
            inner = Scope({}, scope)
            self.assign(first.target, item, inner)
            if all(self.truth(self.eval(cond, inner)) for cond in first.ifs):
                yield from self._gen(rest, inner, node, inner_outer)

    def e_GeneratorExp(self, node: ast.GeneratorExp, scope: Scope) -> Any:
        return (self.eval(node.elt, s) for s in self._gen(node.generators, scope, node))

    def e_ListComp(self, node: ast.ListComp, scope: Scope) -> Any:
        out = []
        for s in self._gen(node.generators, scope, node):
            out.append(self.eval(node.elt, s))
            self.meter.check_len(len(out), "a list comprehension", text=False)
            self.meter.alloc(1)
        return out

    def e_SetComp(self, node: ast.SetComp, scope: Scope) -> Any:
        out = set()
        for s in self._gen(node.generators, scope, node):
            out.add(self.eval(node.elt, s))
            self.meter.check_len(len(out), "a set comprehension", text=False)
            self.meter.alloc(1)
        return out

    def e_DictComp(self, node: ast.DictComp, scope: Scope) -> Any:
        out = {}
        for s in self._gen(node.generators, scope, node):
            out[self.eval(node.key, s)] = self.eval(node.value, s)
            self.meter.check_len(len(out), "a dict comprehension", text=False)
            self.meter.alloc(1)
        return out

    def iterate(self, value: Any, node: ast.AST) -> Iterator[Any]:
        """Iterate a value, one step per item; only plain data and the sandbox's own lazy values."""
        if isinstance(value, (ClassRef, ModuleRef, Namespace, Environ, Function, BoundMethod)):
            raise self.refuse(node, f"iterating over '{value}'")
        if isinstance(value, OpenFile):
            value = value.text.splitlines(keepends=True)
        tick = self.meter.tick
        for item in value:
            tick()
            yield item

    def consume(self, value: Any) -> Iterator[Any]:
        return self.iterate(value, None)  # type: ignore[arg-type]

    def measure(self, value: Any) -> None:
        """Walk a value before a C-level copy/dump of it: its size (shared parts counted each time they
        appear, as the copy will) must fit the budget."""
        budget = self.meter.budget.max_items * 2
        stack = [value]
        seen = 0
        while stack:
            v = stack.pop()
            seen += 1
            if seen > budget:
                raise self.meter.refuse("copying a value this large", f"max_items*2={budget}")
            if isinstance(v, dict):
                stack.extend(v.keys())
                stack.extend(v.values())
            elif isinstance(v, (list, tuple, set, frozenset)):
                stack.extend(v)

    # ------------------------------------------------------------------ calls
    def e_Call(self, node: ast.Call, scope: Scope) -> Any:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("locals", "globals", "vars") and \
                self._unbound(func.id, scope):
            if node.args or node.keywords:
                raise self.refuse(node, f"{func.id}() with arguments")
            target = scope if func.id != "globals" else scope.module()
            return {k: v for k, v in target.vars.items() if not k.startswith("__")}
        if isinstance(func, ast.Name) and func.id == "eval" and self._unbound("eval", scope):
            return self.eval_name(node, scope)
        fn = self.eval(func, scope)
        args = list(self.items(node.args, scope))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                extra = self.eval(kw.value, scope)
                if not isinstance(extra, dict):
                    raise TypeError("argument after ** must be a mapping")
                kwargs.update(extra)
            else:
                kwargs[kw.arg] = self.eval(kw.value, scope)
        self.at(node)
        return self.call(fn, args, kwargs, node)

    def eval_name(self, node: ast.Call, scope: Scope) -> Any:
        """``eval('SomeName_' + x)``: configs use it to pick an imported name. Only a name is looked up;
        no code is evaluated."""
        if len(node.args) != 1 or node.keywords:
            raise self.refuse(node, "eval() with more than one argument")
        text = self.eval(node.args[0], scope)
        if not (isinstance(text, str) and text.strip().isidentifier()):
            raise self.refuse(node, f"eval() of {str(text)[:60]!r}", "is not allowed in safe mode: only eval() of a "
                              "single name is looked up")
        return self.lookup(text.strip(), scope, node)

    def _unbound(self, name: str, scope: Scope) -> bool:
        s: Scope | None = scope
        while s is not None:
            if name in s.vars:
                return False
            s = s.parent
        return True

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        if isinstance(fn, Function):
            return fn(*args, **kwargs)
        if isinstance(fn, ClassRef):
            if args:
                raise self.refuse(node, f"calling '{fn.name}' with positional arguments",
                                  "is not possible in safe mode: an imported name only builds a "
                                  f"dict(type={fn.name}, ...) from keyword arguments")
            return fn(**kwargs)
        if isinstance(fn, BoundMethod):
            return self.call_method(fn, args, kwargs, node)
        if isinstance(fn, type) and fn in _EXCEPTIONS.values():
            return fn(*args, **kwargs)
        if callable(fn) and id(fn) in self._callable_ids:
            if getattr(fn, "_literal_name", False):
                self._check_literal(node)
            try:
                result = fn(*args, **kwargs)
            except TimeoutError:
                raise self.meter.refuse("a regular expression ran too long",
                                        f"regex_seconds={self.meter.budget.regex_seconds}") from None
            return self.sized(result, node)
        raise self.refuse(node, f"calling '{fn}'")

    def _check_literal(self, node: ast.Call) -> None:
        if not node.args or not (isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            raise self.refuse(node, "reading an environment variable whose name is not a literal string",
                              "is not allowed in safe mode (write os.environ.get('NAME'))")

    def env_read(self, name_node: ast.AST, name: Any, default: Any) -> Any:
        if not (isinstance(name_node, ast.Constant) and isinstance(name_node.value, str)):
            raise self.refuse(name_node, "reading an environment variable whose name is not a literal string",
                              "is not allowed in safe mode (write os.environ.get('NAME'))")
        return self.host.env_get(name_node.value, default)

    def call_method(self, bm: BoundMethod, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> Any:
        obj, name = bm.obj, bm.name
        meter = self.meter
        refuse = lambda why: self.refuse(node, why, "")
        if isinstance(obj, Environ):
            if not node.args:
                raise TypeError("os.environ.get() takes a variable name")
            return self.env_read(node.args[0], args[0], args[1] if len(args) > 1 else kwargs.get("default"))
        if isinstance(obj, OpenFile):
            return obj.text if name == "read" else obj.text.splitlines(keepends=True)
        if isinstance(obj, str):
            if name == "format":
                return formatting.safe_format(meter, refuse, obj, args, kwargs)
            if name == "format_map":
                if len(args) != 1 or kwargs or not isinstance(args[0], dict):
                    raise TypeError("format_map() takes one dict in safe mode")
                return formatting.safe_format(meter, refuse, obj, (), args[0])
            self._guard_str_method(obj, name, args)
        if isinstance(obj, dict) and name == "deepcopy":
            self.measure(obj)
            import copy

            return copy.deepcopy(obj)
        if isinstance(obj, list) and name == "extend" and args:
            args = [list(self.iterate(args[0], node))] + args[1:]
            meter.check_len(len(obj) + len(args[0]), "list.extend", text=False)
        if isinstance(obj, (dict, set)) and name == "update":
            args = [self.sized(a if isinstance(a, (dict, set)) else list(self.iterate(a, node))) for a in args]
        if isinstance(obj, regex.Pattern) and name in _REGEX_CALLS:
            kwargs.setdefault("timeout", meter.budget.regex_seconds)
        if isinstance(obj, list) and name == "sort" and "key" in kwargs and kwargs["key"] is not None:
            key = kwargs["key"]
            if not (isinstance(key, Function) or id(key) in self._callable_ids):
                raise refuse(f"sorting with key={key}")
        try:
            result = getattr(obj, name)(*args, **kwargs)
        except TimeoutError:
            raise meter.refuse("a regular expression ran too long",
                               f"regex_seconds={meter.budget.regex_seconds}") from None
        if name in _MUTATORS:
            self.sized(obj, node)
        return self.sized(result, node)

    def _guard_str_method(self, s: str, name: str, args: list[Any]) -> None:
        meter = self.meter
        if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
            old, new = args[0], args[1]
            n = len(s) + 1 if old == "" else s.count(old)
            meter.check_len(len(s) + n * max(len(new) - len(old), 0), "str.replace", text=True)
        elif name in ("center", "ljust", "rjust", "zfill") and args and isinstance(args[0], int):
            meter.check_len(args[0], f"str.{name}", text=True)
        elif name == "expandtabs":
            size = args[0] if args and isinstance(args[0], int) else 8
            meter.check_len(len(s) + s.count("\t") * max(size, 0), "str.expandtabs", text=True)
        elif name == "join" and args:
            parts = args[0] if isinstance(args[0], (list, tuple)) else None
            if parts is not None:
                total = sum(len(p) if isinstance(p, str) else 0 for p in parts) + len(s) * max(len(parts) - 1, 0)
                meter.check_len(total, "str.join", text=True)
            else:
                args[0] = list(self.consume(args[0]))
                self._guard_str_method(s, name, args)

    # ------------------------------------------------------------------ builtins
    def _builtins(self) -> dict[str, Any]:
        meter = self.meter

        def range_(*args: int) -> range:
            r = range(*args)
            meter.check_len(len(r), "range()", text=False)
            return r

        def pow_(a: Any, b: Any, mod: Any = None) -> Any:
            return self.power(a, b, mod)

        def sum_(iterable: Iterable[Any], start: Any = 0) -> Any:
            if isinstance(start, list):  # sum(list_of_lists, []): linear, not quadratic
                out = list(start)
                for item in self.consume(iterable):
                    if not isinstance(item, list):
                        raise TypeError(f'can only concatenate list (not "{type(item).__name__}") to list')
                    meter.check_len(len(out) + len(item), "sum()", text=False)
                    out.extend(item)
                return out
            total = start
            for item in self.consume(iterable):
                if isinstance(total, SEQUENCES) and isinstance(item, SEQUENCES):
                    meter.check_len(len(total) + len(item), "sum()", text=isinstance(total, TEXT))
                if isinstance(total, int) and isinstance(item, int):
                    meter.check_int_bits(max(total.bit_length(), item.bit_length()) + 1, "sum()")
                total = total + item
            return total

        def format_(value: Any, spec: str = "") -> str:
            return formatting.format_value(meter, value, spec)

        def print_(*args: Any, **kwargs: Any) -> None:
            return None  # configs print progress notes; safe mode keeps stdout for promptweave

        def open_(path: Any, mode: str = "r", encoding: str | None = None, **kwargs: Any) -> OpenFile:
            if mode not in ("r", "rt"):
                raise self.refuse(None, f"open() with mode {mode!r}", "is not allowed in safe mode (read-only 'r')")
            return OpenFile(self.host.open_file(path, mode, encoding))

        def sorted_(iterable: Iterable[Any], *, key: Any = None, reverse: bool = False) -> list[Any]:
            if key is not None and not (isinstance(key, Function) or id(key) in self._callable_ids):
                raise TypeError(f"sorted() key must be a function, not {key}")
            return sorted(self.consume(iterable), key=key, reverse=reverse)

        def max_(*args: Any, **kwargs: Any) -> Any:
            return max(*(list(self.consume(args[0])),) if len(args) == 1 else args, **kwargs)

        def min_(*args: Any, **kwargs: Any) -> Any:
            return min(*(list(self.consume(args[0])),) if len(args) == 1 else args, **kwargs)

        names: dict[str, Any] = {
            "True": True, "False": False, "None": None,
            "dict": dict, "list": list, "tuple": tuple, "set": set, "frozenset": frozenset, "len": len,
            "range": range_, "zip": zip, "enumerate": enumerate, "sorted": sorted_, "reversed": reversed,
            "str": str, "int": int, "float": float, "bool": bool, "min": min_, "max": max_,
            "sum": sum_, "any": any, "all": all, "abs": abs, "round": round, "isinstance": isinstance,
            "ord": ord, "chr": chr, "divmod": divmod, "repr": repr, "ascii": ascii, "hash": hash, "map": map,
            "filter": filter, "pow": pow_, "format": format_, "print": print_, "open": open_,
            "hex": hex, "oct": oct, "bin": bin, "slice": slice,
        }
        names.update(_EXCEPTIONS)
        self._callable_ids = {id(v) for v in names.values() if callable(v)}
        self._callable_ids.update(id(v) for ns in self.modules.values() for v in ns.members.values() if callable(v))
        for fn in (self.modules["os"].members["getenv"],):
            fn._literal_name = True  # type: ignore[attr-defined]
        return names


_MISSING = object()
