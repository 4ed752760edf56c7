"""Checker lambdas (LVE's ``LambdaChecker`` ``func`` strings), evaluated in the shared sandbox.

LVE ``eval``s the string; we never do. It is parsed once, checked (a single ``lambda``; names are
its parameters, the sandbox's builtins, ``re`` and ``json``), and each call is interpreted by
:class:`promptweave.sandbox.Interpreter` under a fresh budget — the same rules and budgets as
configs, with ``re`` backed by the ``regex`` package so a pattern runs with a timeout.
"""
from __future__ import annotations

import ast
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from promptweave.errors import BudgetError, SandboxError
from promptweave.sandbox import Budget, Function, Host, Interpreter
from promptweave.sandbox.budget import DEFAULT_BUDGET
from promptweave.sandbox.interp import METHODS, bind_arguments

# Kept as names: checkers and tests match on them.
UnsafeExpressionError = SandboxError
ExpressionLimitError = BudgetError

MAX_STEPS = DEFAULT_BUDGET.max_steps
MAX_SECONDS = 2.0


class _CheckerHost(Host):
    trust_hint = "checker lambdas are always evaluated safely; --trust-checkers runs only checker/checker.py files"


_MODULES = ("re", "json", "math")
_LOCAL = threading.local()


def _parse(source: str, file: str) -> ast.Lambda:
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise SandboxError(f"checker lambda is not a valid Python expression: {exc.msg}", file=file,
                           value=source) from None
    except (RecursionError, MemoryError):
        raise BudgetError("checker lambda nested too deeply to parse (budget max_depth)", file=file) from None
    if not isinstance(tree.body, ast.Lambda):
        raise SandboxError("checker func must be a single 'lambda ...' expression", file=file, value=source)
    probe = Interpreter(file, host=_CheckerHost())
    known_attrs = set().union(*METHODS.values()) | {"get"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                raise SandboxError(f"attribute '{node.attr}' is not allowed in checker lambdas", file=file,
                                   value=source)
            if isinstance(node.value, ast.Name) and node.value.id in _MODULES:
                if node.attr not in probe.modules[node.value.id].members:
                    raise SandboxError(f"'{node.value.id}.{node.attr}' is not available in checker lambdas",
                                       file=file, value=source)
            elif node.attr not in known_attrs:
                raise SandboxError(f"method or attribute '.{node.attr}' is not available in checker lambdas",
                                   file=file, value=source)
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise SandboxError(f"name '{node.id}' is not allowed in checker lambdas", file=file, value=source)
        if isinstance(node, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            raise SandboxError(f"'{type(node).__name__}' is not allowed in checker lambdas", file=file,
                               value=source)
    lam = tree.body
    available = set(probe.builtins) | set(_MODULES)
    unknown = sorted(_free_names(lam, set()) - available)
    if unknown:
        raise SandboxError(f"name(s) {', '.join(unknown)} are not available in checker lambdas", file=file,
                           value=source, expected="the lambda's parameters and " +
                           ", ".join(sorted(k for k in available if k[0].islower())))
    return lam


def _target_names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _free_names(node: ast.AST, bound: set[str]) -> set[str]:
    """Names read by ``node`` that are not bound by an enclosing lambda or comprehension."""
    if isinstance(node, ast.Name):
        return set() if node.id in bound else {node.id}
    if isinstance(node, ast.Lambda):
        args = node.args
        inner = bound | {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        inner |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        free: set[str] = set()
        for d in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
            free |= _free_names(d, bound)
        return free | _free_names(node.body, inner)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        free = set()
        scope = set(bound)
        for i, gen in enumerate(node.generators):
            free |= _free_names(gen.iter, bound if i == 0 else scope)
            scope |= _target_names(gen.target)
            for cond in gen.ifs:
                free |= _free_names(cond, scope)
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for part in parts:
            free |= _free_names(part, scope)
        return free
    free = set()
    for child in ast.iter_child_nodes(node):
        free |= _free_names(child, bound)
    return free


@dataclass(frozen=True)
class SafeLambda:
    """A parsed, validated checker lambda; call it like the Python lambda it spells."""

    source: str
    node: ast.Lambda
    max_steps: int = MAX_STEPS
    max_seconds: float = MAX_SECONDS
    file: str = "checker lambda"

    @classmethod
    def compile(cls, source: str, *, max_steps: int = MAX_STEPS, max_seconds: float = MAX_SECONDS,
                file: str = "checker lambda") -> SafeLambda:
        return cls(source, _parse(source, file), max_steps, max_seconds, file)

    @property
    def positional_params(self) -> list[str]:
        return [a.arg for a in self.node.args.posonlyargs + self.node.args.args]

    @property
    def keyword_params(self) -> list[str]:
        """Names a keyword argument may bind (all but positional-only)."""
        return [a.arg for a in self.node.args.args + self.node.args.kwonlyargs]

    @property
    def takes_var_kwargs(self) -> bool:
        return self.node.args.kwarg is not None

    def required_after_first(self) -> list[str]:
        """Parameters after the first that have no default (must come from the instance)."""
        args = self.node.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        n_default = len(args.defaults)
        required = positional[1:len(positional) - n_default] if n_default else positional[1:]
        required += [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
        return required

    def check_call(self, n_positional: int, keywords: Iterable[str]) -> None:
        """Raise TypeError now if calling with these argument names would fail."""
        from promptweave.sandbox.interp import NO_DEFAULT

        defaults = [None] * len(self.node.args.defaults)
        kw_defaults = [NO_DEFAULT if d is None else None for d in self.node.args.kw_defaults]
        bind_arguments(self.node.args, tuple(range(n_positional)), {k: None for k in keywords}, defaults,
                       kw_defaults, "<lambda>")

    def _interpreter(self) -> Interpreter:
        """One interpreter per lambda and thread, its meter reset for every call (a fresh budget)."""
        cache = _LOCAL.__dict__.setdefault("interps", {})
        key = (id(self.node), self.max_steps, self.max_seconds)
        interp = cache.get(key)
        if interp is None or cache.get((key, "node")) is not self.node:
            budget = replace(DEFAULT_BUDGET, max_steps=self.max_steps, max_seconds=self.max_seconds)
            interp = Interpreter(self.file, host=_CheckerHost(), budget=budget)
            for name in _MODULES:
                interp.builtins[name] = interp.modules[name]
            cache[key], cache[(key, "node")] = interp, self.node
        meter = interp.meter
        meter.steps = meter.depth = meter.allocated = 0
        meter.started = time.monotonic()
        return interp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        interp = self._interpreter()
        fn = interp.eval_expression(self.node)
        assert isinstance(fn, Function)
        try:
            result = fn(*args, **kwargs)
            if hasattr(result, "__next__"):
                result = list(interp.consume(result))
        except RecursionError:
            raise BudgetError("checker lambda nested too deeply (budget max_depth)", file=self.file) from None
        return result


__all__ = ["Budget", "ExpressionLimitError", "SafeLambda", "UnsafeExpressionError"]
