"""The only modules sandboxed code can reach: allow-lists of pure functions, each guarded by the budget.

Everything else a config imports becomes an inert :class:`~promptweave.sandbox.refs.ClassRef` /
:class:`~promptweave.sandbox.refs.ModuleRef`. Functions that touch the outside world go through the
host: ``os.getenv`` / ``os.environ.get`` (literal names only, every read recorded),
``os.path.exists`` (inside the config's roots only) and ``open`` (read-only, inside the roots).
"""
from __future__ import annotations

import copy
import itertools
import json
import math
import posixpath
import string
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import regex


class InterpreterLike(Protocol):
    """What the allowed functions need of the interpreter that runs them (``sandbox.interp.Interpreter``).

    Named here, below the interpreter, so this module never imports it back.
    """

    meter: Any
    host: Any

    def consume(self, it: Any) -> Any: ...

    def measure(self, value: Any) -> None: ...


class Namespace:
    """A read-only bag of allowed members under a module's name (``os.path.join``)."""

    def __init__(self, name: str, members: dict[str, Any]) -> None:
        self.name = name
        self.members = members

    def __repr__(self) -> str:
        return f"<module {self.name}>"

    __str__ = __repr__

    def __deepcopy__(self, memo: Any) -> Namespace:
        return self


class Environ:
    """``os.environ`` as configs may use it: ``.get('NAME', default)``, ``['NAME']``, ``'NAME' in``."""

    def __repr__(self) -> str:
        return "<os.environ>"

    def __deepcopy__(self, memo: Any) -> Environ:
        return self


ENVIRON = Environ()

def build(interp: InterpreterLike) -> dict[str, Namespace]:
    """The pure modules, bound to one interpreter's meter and host."""
    meter = interp.meter
    host = interp.host

    def product(*iterables: Iterable[Any], repeat: int = 1) -> Any:
        pools = [tuple(interp.consume(it)) for it in iterables]
        total = 1
        for pool in pools:
            total *= len(pool)
        total = total ** max(repeat, 0) if repeat > 1 else total
        meter.check_len(total, "itertools.product", text=False)
        return itertools.product(*pools, repeat=repeat)

    def chain(*iterables: Iterable[Any]) -> Any:
        return itertools.chain(*(tuple(interp.consume(it)) for it in iterables))

    def factorial(n: int) -> int:
        meter.check_int_bits(int(n * max(math.log2(max(n, 2)), 1)), "math.factorial")
        return math.factorial(n)

    def comb(n: int, k: int) -> int:
        meter.check_int_bits(int(n), "math.comb")
        return math.comb(n, k)

    def perm(n: int, k: int | None = None) -> int:
        meter.check_int_bits(int(n * max(math.log2(max(n, 2)), 1)), "math.perm")
        return math.perm(n, k)

    def deepcopy(value: Any, memo: Any = None) -> Any:
        interp.measure(value)
        return copy.deepcopy(value)

    def shallow_copy(value: Any) -> Any:
        return copy.copy(value)

    def loads(text: str | bytes, **kw: Any) -> Any:
        if kw:
            raise TypeError("json.loads takes no options in safe mode")
        meter.check_len(len(text), "json.loads", text=True)
        try:
            return json.loads(text)
        except RecursionError:
            raise meter.refuse("json.loads of a document nested too deeply",
                               f"max_depth={meter.budget.max_depth}") from None

    def dumps(value: Any, **kw: Any) -> str:
        allowed = {"ensure_ascii", "indent", "sort_keys", "separators"}
        if set(kw) - allowed:
            raise TypeError(f"json.dumps takes only {', '.join(sorted(allowed))} in safe mode")
        if isinstance(kw.get("indent"), int):
            meter.check_len(kw["indent"], "json.dumps indent", text=True)
        interp.measure(value)
        out = json.dumps(value, **kw)
        meter.check_len(len(out), "json.dumps", text=True)
        return out

    def getenv(name: str, default: Any = None) -> Any:
        return host.env_get(name, default)

    def join(*parts: str) -> str:
        return posixpath.join(*parts)

    path = Namespace("os.path", {
        "join": join, "basename": posixpath.basename, "dirname": posixpath.dirname,
        "splitext": posixpath.splitext, "split": posixpath.split, "normpath": posixpath.normpath,
        "isabs": posixpath.isabs, "sep": "/",
        "exists": host.path_exists, "isfile": host.path_isfile, "isdir": host.path_isdir,
    })
    os_ns = Namespace("os", {"path": path, "environ": ENVIRON, "getenv": getenv, "sep": "/", "linesep": "\n"})
    math_names = ("exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "floor", "ceil", "trunc", "fabs",
                  "isnan", "isinf", "isfinite", "isclose", "gcd", "lcm", "sin", "cos", "tan", "asin", "acos",
                  "atan", "atan2", "sinh", "cosh", "tanh", "hypot", "degrees", "radians", "copysign", "fmod",
                  "modf", "frexp", "ldexp", "erf", "erfc", "gamma", "lgamma", "pi", "e", "tau", "inf", "nan")
    math_ns = Namespace("math", {n: getattr(math, n) for n in math_names} | {
        "factorial": factorial, "comb": comb, "perm": perm, "pow": math.pow, "fsum": math.fsum})
    timeout = meter.budget.regex_seconds

    def with_timeout(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("timeout", timeout)
            return fn(*args, **kwargs)

        call.__name__ = fn.__name__
        return call

    re_ns = Namespace("re", {
        "search": with_timeout(regex.search), "match": with_timeout(regex.match),
        "fullmatch": with_timeout(regex.fullmatch), "findall": with_timeout(regex.findall),
        "finditer": with_timeout(regex.finditer), "sub": with_timeout(regex.sub), "subn": with_timeout(regex.subn),
        "split": with_timeout(regex.split), "escape": regex.escape, "compile": regex.compile,
        "I": regex.I, "IGNORECASE": regex.I, "M": regex.M, "MULTILINE": regex.M, "S": regex.S, "DOTALL": regex.S,
        "A": regex.A, "ASCII": regex.A, "X": regex.X, "VERBOSE": regex.X, "U": regex.U, "UNICODE": regex.U,
    })
    return {
        "os": os_ns,
        "os.path": path,
        "posixpath": path,
        "math": math_ns,
        "itertools": Namespace("itertools", {"product": product, "chain": chain}),
        "copy": Namespace("copy", {"deepcopy": deepcopy, "copy": shallow_copy}),
        "json": Namespace("json", {"loads": loads, "dumps": dumps}),
        "re": re_ns,
        "string": Namespace("string", {n: getattr(string, n) for n in (
            "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits", "octdigits",
            "punctuation", "whitespace", "printable")}),
    }
