"""A restricted evaluator for the ``lambda`` expressions LVE checkers are written in.

LVE ``eval``s the ``func`` string of a LambdaChecker. We never do: the string is
parsed with :mod:`ast` and walked here, so a test file can only compute with plain
values. What is refused:

- attribute access to any name starting with ``_`` and to anything not on a small
  per-type allow list (so no ``().__class__.__mro__`` escapes, no ``str.format``);
- names other than the lambda's parameters, a few safe builtins, ``re`` and ``json``
  (so no ``__import__``, ``open``, ``eval``, ``getattr``);
- statements of any kind (only a single ``lambda`` expression is accepted);
- unbounded work: every evaluated node costs one step, a run is stopped after
  ``max_steps`` steps or ``max_seconds`` of wall time, and operations that could
  allocate huge results (``**``, sequence repetition, ``str.replace``...) are
  checked before they run.

A regular expression run by ``re`` inside one step is not interruptible; patterns
come from the test author, like the rest of the expression.
"""
from __future__ import annotations

import ast
import json
import operator
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from promptweave.errors import LVEError

MAX_STEPS = 1_000_000
MAX_SECONDS = 2.0
MAX_SEQ_LEN = 1_000_000
MAX_INT_BITS = 100_000


class UnsafeExpressionError(LVEError):
    """The lambda uses something the restricted evaluator does not allow."""

    code = "PW540"


class ExpressionLimitError(LVEError):
    """The lambda ran past its step, time or size budget."""

    code = "PW541"


class LambdaRuntimeError(LVEError):
    """The lambda raised while computing a verdict (e.g. ``int('abc')``)."""

    code = "PW542"


# --- the namespace an expression may see --------------------------------------------------------


class _Namespace:
    """A read-only bag of allowed callables exposed under a module-like name (``re.search``)."""

    def __init__(self, name: str, members: dict[str, Any]) -> None:
        self._name = name
        self._members = members

    def get(self, attr: str) -> Any:
        if attr not in self._members:
            raise UnsafeExpressionError(f"'{self._name}.{attr}' is not available in checker lambdas",
                                        expected=", ".join(sorted(self._members)))
        return self._members[attr]


def _safe_range(*args: int) -> range:
    r = range(*args)
    if len(r) > MAX_SEQ_LEN:
        raise ExpressionLimitError("range() too large for a checker lambda", value=len(r))
    return r


_RE = _Namespace("re", {
    "search": re.search, "match": re.match, "fullmatch": re.fullmatch, "findall": re.findall,
    "finditer": re.finditer, "sub": re.sub, "subn": re.subn, "split": re.split, "escape": re.escape,
    "compile": re.compile,
    "I": re.I, "IGNORECASE": re.I, "M": re.M, "MULTILINE": re.M, "S": re.S, "DOTALL": re.S,
    "A": re.A, "ASCII": re.A, "X": re.X, "VERBOSE": re.X,
})
_JSON = _Namespace("json", {"loads": json.loads, "dumps": json.dumps})

SAFE_BUILTINS: dict[str, Any] = {
    "len": len, "int": int, "float": float, "str": str, "bool": bool, "abs": abs, "min": min,
    "max": max, "sum": sum, "any": any, "all": all, "sorted": sorted, "reversed": reversed,
    "enumerate": enumerate, "zip": zip, "range": _safe_range, "round": round, "list": list,
    "tuple": tuple, "set": set, "dict": dict, "frozenset": frozenset, "ord": ord, "chr": chr,
    "divmod": divmod, "repr": repr, "map": map, "filter": filter, "isinstance": isinstance,
    "True": True, "False": False, "None": None, "re": _RE, "json": _JSON,
}

SAFE_BUILTINS["pow"] = lambda a, b: _pow(a, b)

# Methods callable on values of each type; anything else (and every _name) is refused.
_STR_METHODS = frozenset({
    "lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith",
    "endswith", "find", "rfind", "index", "rindex", "count", "replace", "join", "isdigit", "isnumeric",
    "isdecimal", "isalpha", "isalnum", "isspace", "islower", "isupper", "istitle", "title",
    "capitalize", "casefold", "swapcase", "partition", "rpartition", "removeprefix", "removesuffix",
    "encode",
})
_ALLOWED_ATTRS: tuple[tuple[type, frozenset[str]], ...] = (
    (str, _STR_METHODS),
    (bytes, frozenset({"decode", "lower", "upper", "strip", "startswith", "endswith", "count", "find"})),
    (list, frozenset({"count", "index"})),
    (tuple, frozenset({"count", "index"})),
    (dict, frozenset({"get", "keys", "values", "items"})),
    (set, frozenset({"issubset", "issuperset", "union", "intersection", "difference", "isdisjoint"})),
    (frozenset, frozenset({"issubset", "issuperset", "union", "intersection", "difference", "isdisjoint"})),
    (int, frozenset({"real", "imag", "bit_length"})),
    (float, frozenset({"real", "imag", "is_integer"})),
    (re.Match, frozenset({"group", "groups", "groupdict", "start", "end", "span", "string"})),
    (re.Pattern, frozenset({"search", "match", "fullmatch", "findall", "finditer", "sub", "split", "pattern"})),
)


def _attr(value: Any, name: str) -> Any:
    if name.startswith("_"):
        raise UnsafeExpressionError(f"attribute '{name}' is not allowed in checker lambdas", value=name)
    if isinstance(value, _Namespace):
        return value.get(name)
    for typ, names in _ALLOWED_ATTRS:
        if isinstance(value, typ):
            if name in names:
                return getattr(value, name)
            break
    raise UnsafeExpressionError(
        f"attribute '.{name}' of a {type(value).__name__} is not allowed in checker lambdas", value=name)


# --- size guards ----------------------------------------------------------------------------------


def _guard_len(n: int, what: str) -> None:
    if n > MAX_SEQ_LEN:
        raise ExpressionLimitError(f"{what} would build a value of {n} items; limit {MAX_SEQ_LEN}")


def _mul(a: Any, b: Any) -> Any:
    for seq, k in ((a, b), (b, a)):
        if isinstance(seq, (str, bytes, list, tuple)) and isinstance(k, int) and not isinstance(k, bool):
            _guard_len(len(seq) * max(k, 0), "sequence repetition")
    return operator.mul(a, b)


def _pow(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
        if a.bit_length() * b > MAX_INT_BITS:
            raise ExpressionLimitError("integer power too large for a checker lambda", value=f"{a}**{b}")
    return operator.pow(a, b)


def _mod(a: Any, b: Any) -> Any:
    if isinstance(a, (str, bytes)):
        text = a.decode("latin-1") if isinstance(a, bytes) else a
        if any(int(n) > MAX_SEQ_LEN for n in re.findall(r"%[-+ #0]*(\d+)", text)):
            raise ExpressionLimitError("%-format width too large for a checker lambda")
    return operator.mod(a, b)


def _lshift(a: Any, b: Any) -> Any:
    if isinstance(b, int) and b > MAX_INT_BITS:
        raise ExpressionLimitError("shift too large for a checker lambda", value=b)
    return operator.lshift(a, b)


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: _mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: _mod, ast.Pow: _pow, ast.LShift: _lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
}
_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}


def _guard_call(fn: Any, args: list[Any], kwargs: dict[str, Any]) -> None:
    """Pre-checks for the few allowed callables that can blow up memory."""
    name = getattr(fn, "__name__", "")
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, str) and name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        if isinstance(old, str) and isinstance(new, str):
            n = len(owner) + 1 if old == "" else len(owner) // max(len(old), 1)
            _guard_len(len(owner) + n * len(new), "str.replace")
    if isinstance(owner, str) and name == "join" and args:
        pass  # bounded by the size of its (already built) argument


# --- the evaluator --------------------------------------------------------------------------------


@dataclass
class _Budget:
    max_steps: int
    deadline: float
    steps: int = 0

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise ExpressionLimitError(f"checker lambda stopped after {self.max_steps} steps")
        if not self.steps & 0x3FF and time.monotonic() > self.deadline:
            raise ExpressionLimitError("checker lambda stopped: ran out of time")


class _Closure:
    """A lambda value produced by the evaluator; calling it evaluates its body."""

    def __init__(self, evaluator: "_Evaluator", node: ast.Lambda, env: dict[str, Any]) -> None:
        self._ev = evaluator
        self._node = node
        self._env = env
        self.__name__ = "<lambda>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        scope = dict(self._env)
        scope.update(_bind(self._node.args, args, kwargs, self._ev, self._env))
        return self._ev.eval(self._node.body, scope)


def _bind(spec: ast.arguments, args: tuple, kwargs: dict[str, Any], ev: "_Evaluator",
          env: dict[str, Any]) -> dict[str, Any]:
    """Bind call arguments to a lambda's parameters like Python does (TypeError on mismatch)."""
    positional = [a.arg for a in spec.posonlyargs + spec.args]
    defaults = [ev.eval(d, env) for d in spec.defaults]
    bound: dict[str, Any] = {}
    if len(args) > len(positional) and spec.vararg is None:
        raise TypeError(f"<lambda>() takes {len(positional)} positional arguments but {len(args)} were given")
    for name, value in zip(positional, args):
        bound[name] = value
    if spec.vararg is not None:
        bound[spec.vararg.arg] = tuple(args[len(positional):])
    extra: dict[str, Any] = {}
    kwonly = [a.arg for a in spec.kwonlyargs]
    for key, value in kwargs.items():
        if key in bound:
            raise TypeError(f"<lambda>() got multiple values for argument '{key}'")
        if key in positional or key in kwonly:
            bound[key] = value
        elif spec.kwarg is not None:
            extra[key] = value
        else:
            raise TypeError(f"<lambda>() got an unexpected keyword argument '{key}'")
    first_default = len(positional) - len(defaults)
    for i, name in enumerate(positional):
        if name not in bound:
            if i >= first_default:
                bound[name] = defaults[i - first_default]
            else:
                raise TypeError(f"<lambda>() missing required argument: '{name}'")
    for arg, default in zip(spec.kwonlyargs, spec.kw_defaults):
        if arg.arg not in bound:
            if default is None:
                raise TypeError(f"<lambda>() missing required keyword-only argument: '{arg.arg}'")
            bound[arg.arg] = ev.eval(default, env)
    if spec.kwarg is not None:
        bound[spec.kwarg.arg] = extra
    return bound


class _Evaluator:
    def __init__(self, budget: _Budget) -> None:
        self.budget = budget

    def eval(self, node: ast.AST, env: dict[str, Any]) -> Any:
        self.budget.tick()
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise UnsafeExpressionError(f"'{type(node).__name__}' is not allowed in checker lambdas")
        return method(node, env)

    # leaves
    def _Constant(self, node: ast.Constant, env: dict[str, Any]) -> Any:
        return node.value

    def _Name(self, node: ast.Name, env: dict[str, Any]) -> Any:
        if node.id in env:
            return env[node.id]
        if node.id in SAFE_BUILTINS:
            return SAFE_BUILTINS[node.id]
        raise UnsafeExpressionError(f"name '{node.id}' is not available in checker lambdas", value=node.id)

    # operators
    def _BoolOp(self, node: ast.BoolOp, env: dict[str, Any]) -> Any:
        result: Any = None
        for value in node.values:
            result = self.eval(value, env)
            if isinstance(node.op, ast.And) and not result:
                return result
            if isinstance(node.op, ast.Or) and result:
                return result
        return result

    def _BinOp(self, node: ast.BinOp, env: dict[str, Any]) -> Any:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise UnsafeExpressionError(f"operator {type(node.op).__name__} is not allowed")
        result = op(self.eval(node.left, env), self.eval(node.right, env))
        if isinstance(result, (str, bytes, list, tuple)):
            _guard_len(len(result), "an operation")
        return result

    def _UnaryOp(self, node: ast.UnaryOp, env: dict[str, Any]) -> Any:
        return _UNARY[type(node.op)](self.eval(node.operand, env))

    def _Compare(self, node: ast.Compare, env: dict[str, Any]) -> Any:
        left = self.eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, env)
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp, env: dict[str, Any]) -> Any:
        return self.eval(node.body if self.eval(node.test, env) else node.orelse, env)

    # containers
    def _List(self, node: ast.List, env: dict[str, Any]) -> Any:
        return list(self._items(node.elts, env))

    def _Tuple(self, node: ast.Tuple, env: dict[str, Any]) -> Any:
        return tuple(self._items(node.elts, env))

    def _Set(self, node: ast.Set, env: dict[str, Any]) -> Any:
        return set(self._items(node.elts, env))

    def _Dict(self, node: ast.Dict, env: dict[str, Any]) -> Any:
        out: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                out.update(self.eval(value, env))
            else:
                out[self.eval(key, env)] = self.eval(value, env)
        return out

    def _items(self, elts: list[ast.expr], env: dict[str, Any]) -> Iterator[Any]:
        for elt in elts:
            if isinstance(elt, ast.Starred):
                yield from self._iter(self.eval(elt.value, env))
            else:
                yield self.eval(elt, env)

    def _iter(self, value: Any) -> Iterator[Any]:
        for item in value:
            self.budget.tick()
            yield item

    def _Subscript(self, node: ast.Subscript, env: dict[str, Any]) -> Any:
        value = self.eval(node.value, env)
        if isinstance(value, _Namespace):
            raise UnsafeExpressionError("subscripting a module is not allowed")
        return value[self.eval(node.slice, env)]

    def _Slice(self, node: ast.Slice, env: dict[str, Any]) -> Any:
        part = lambda n: None if n is None else self.eval(n, env)  # noqa: E731
        return slice(part(node.lower), part(node.upper), part(node.step))

    def _Attribute(self, node: ast.Attribute, env: dict[str, Any]) -> Any:
        return _attr(self.eval(node.value, env), node.attr)

    def _JoinedStr(self, node: ast.JoinedStr, env: dict[str, Any]) -> Any:
        return "".join(str(self.eval(v, env)) for v in node.values)

    def _FormattedValue(self, node: ast.FormattedValue, env: dict[str, Any]) -> Any:
        value = self.eval(node.value, env)
        if node.conversion == ord("r"):
            value = repr(value)
        elif node.conversion == ord("s"):
            value = str(value)
        elif node.conversion == ord("a"):
            value = ascii(value)
        spec = "" if node.format_spec is None else self.eval(node.format_spec, env)
        if any(int(n) > MAX_SEQ_LEN for n in re.findall(r"\d+", spec)):
            raise ExpressionLimitError("format width too large for a checker lambda", value=spec)
        if not isinstance(value, (str, int, float, bool, type(None))):
            value = str(value)
        return format(value, spec)

    # calls and functions
    def _Call(self, node: ast.Call, env: dict[str, Any]) -> Any:
        fn = self.eval(node.func, env)
        if isinstance(fn, _Namespace) or isinstance(fn, type) and fn not in SAFE_BUILTINS.values():
            raise UnsafeExpressionError("calling this object is not allowed in checker lambdas")
        args = list(self._items(node.args, env))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value, env))
            else:
                kwargs[kw.arg] = self.eval(kw.value, env)
        _guard_call(fn, args, kwargs)
        result = fn(*args, **kwargs)
        if isinstance(result, (str, bytes, list, tuple)):
            _guard_len(len(result), "a call")
        return result

    def _Lambda(self, node: ast.Lambda, env: dict[str, Any]) -> Any:
        return _Closure(self, node, env)

    # comprehensions (lazy, like Python's generators, so all()/any() short-circuit)
    def _gen(self, generators: list[ast.comprehension], env: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if not generators:
            yield env
            return
        first, rest = generators[0], generators[1:]
        if first.is_async:
            raise UnsafeExpressionError("async comprehensions are not allowed")
        for item in self._iter(self.eval(first.iter, env)):
            scope = dict(env)
            self._assign(first.target, item, scope)
            if all(self.eval(cond, scope) for cond in first.ifs):
                yield from self._gen(rest, scope)

    def _assign(self, target: ast.expr, value: Any, scope: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value)
            if len(values) != len(target.elts):
                raise ValueError(f"cannot unpack {len(values)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, values):
                self._assign(t, v, scope)
        else:
            raise UnsafeExpressionError("only names and tuples can be comprehension targets")

    def _GeneratorExp(self, node: ast.GeneratorExp, env: dict[str, Any]) -> Any:
        return (self.eval(node.elt, scope) for scope in self._gen(node.generators, env))

    def _ListComp(self, node: ast.ListComp, env: dict[str, Any]) -> Any:
        return [self.eval(node.elt, scope) for scope in self._gen(node.generators, env)]

    def _SetComp(self, node: ast.SetComp, env: dict[str, Any]) -> Any:
        return {self.eval(node.elt, scope) for scope in self._gen(node.generators, env)}

    def _DictComp(self, node: ast.DictComp, env: dict[str, Any]) -> Any:
        return {self.eval(node.key, s): self.eval(node.value, s) for s in self._gen(node.generators, env)}


# --- public API -----------------------------------------------------------------------------------


def _parse(source: str) -> ast.Lambda:
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise UnsafeExpressionError(f"checker lambda is not a valid Python expression: {exc.msg}",
                                    value=source) from None
    if not isinstance(tree.body, ast.Lambda):
        raise UnsafeExpressionError("checker func must be a single 'lambda ...' expression", value=source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise UnsafeExpressionError(f"attribute '{node.attr}' is not allowed in checker lambdas",
                                        value=source)
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise UnsafeExpressionError(f"name '{node.id}' is not allowed in checker lambdas", value=source)
        if isinstance(node, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            raise UnsafeExpressionError(f"'{type(node).__name__}' is not allowed in checker lambdas",
                                        value=source)
    lam = tree.body
    unknown = sorted(_free_names(lam, set()) - set(SAFE_BUILTINS))
    if unknown:
        raise UnsafeExpressionError(f"name(s) {', '.join(unknown)} are not available in checker lambdas",
                                    value=source, expected="the lambda's parameters and " +
                                    ", ".join(k for k in SAFE_BUILTINS if k[0].islower()))
    known_attrs = set().union(*(names for _, names in _ALLOWED_ATTRS))
    for node in ast.walk(lam):
        if not isinstance(node, ast.Attribute):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("re", "json"):
            namespace = SAFE_BUILTINS[node.value.id]
            if node.attr not in namespace._members:
                raise UnsafeExpressionError(f"'{node.value.id}.{node.attr}' is not available in checker lambdas",
                                            value=source)
        elif node.attr not in known_attrs:
            raise UnsafeExpressionError(f"method or attribute '.{node.attr}' is not available in checker lambdas",
                                        value=source)
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
        free = set()
        for d in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
            free |= _free_names(d, bound)
        return free | _free_names(node.body, inner)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        free: set[str] = set()
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

    @classmethod
    def compile(cls, source: str, *, max_steps: int = MAX_STEPS, max_seconds: float = MAX_SECONDS) -> "SafeLambda":
        return cls(source, _parse(source), max_steps, max_seconds)

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
        ev = _Evaluator(_Budget(self.max_steps, time.monotonic() + self.max_seconds))
        _bind(self.node.args, tuple(range(n_positional)), {k: None for k in keywords}, ev, {})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        budget = _Budget(self.max_steps, time.monotonic() + self.max_seconds)
        ev = _Evaluator(budget)
        scope = _bind(self.node.args, args, kwargs, ev, {})
        result = ev.eval(self.node.body, scope)
        if hasattr(result, "__next__"):
            result = list(ev._iter(result))
        return result
