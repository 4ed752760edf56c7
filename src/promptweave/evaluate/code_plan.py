"""A test's source split into steps, so that the assertions that can be judged outside the sandbox are.

An assertion becomes *probes* (:func:`judged_of`): the sub-expressions that need the program (a call such as
``f(2)`` or ``candidate(1.33)``, a name of the test or the program) are evaluated in the sandbox, which sends their
values; the rest of the expression (``== 4``, ``abs(... - 0.33) < 1e-6``, ``math.isclose(...)``, ``set(...)``,
indexing) stays here and is evaluated by :class:`promptweave.evaluate.code_verdict.Verdict` over those values, with
the expected literals never entering the sandbox (:func:`probe_of` covers the simplest forms the same way). Every
other statement is run inside the sandbox as written (``exec``), in order, in the program's namespace; with
``typed`` (MBPP, LCBench), a top-level ``assert a == b`` on identities or types (``type(f(x)) == int``) is compared
by the harness's own type-aware equality. Nothing is bound in the program's namespace.

Parsing is all that happens here: nothing of the test runs in this process (``ast.literal_eval`` reads literals).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from promptweave.evaluate.code_verdict import JUDGE_FUNCS, MATH_NAMES, Expect

# inside a check function, names of its scope are not seen by these (they would look the name up globally)
_SCOPED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)
_NEVER = (ast.Await, ast.Yield, ast.YieldFrom)


@dataclass(frozen=True)
class Step:
    """One step of a test, run in the sandbox in order: ``exec`` (statements), ``probe`` (``source`` evaluated,
    its value sent; ``expect`` stays here), ``bind`` (``name`` bound to the value of ``source`` for the probes
    that follow: a check function's parameter) or ``eq`` (``source == name``, type-aware, judged in the sandbox:
    the few assertions on identities or types that plain values cannot carry)."""

    kind: str
    source: str
    name: str = ""
    expect: Expect | None = field(default=None, compare=False)
    truth: bool = False  # the probe's value is used as a truth value: the sandbox sends bool(value)

    def wire(self) -> dict[str, Any]:
        """What the sandbox is sent: never the expected value."""
        out: dict[str, Any] = {"k": self.kind, "src": self.source}
        if self.kind == "eq":
            out["right"] = self.name
        if self.kind == "bind":
            out["as"] = self.name
        if self.kind == "probe" and (self.truth or self.expect is not None and self.expect.how == "truth"):
            out["truth"] = True
        return out


# builtin constructors applied to literals (``set([1, 2])``, ``float('inf')``): read, never run as code
_CONSTRUCTORS: dict[str, Any] = {"set": set, "frozenset": frozenset, "tuple": tuple, "list": list, "float": float,
                                 "int": int, "str": str, "complex": complex, "bool": bool, "dict": dict}


def _value(node: ast.expr) -> Any:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CONSTRUCTORS
            and not node.keywords and len(node.args) <= 1 and not any(isinstance(a, ast.Starred) for a in node.args)):
        make = _CONSTRUCTORS[node.func.id]
        if not node.args:
            return make()
        arg = _value(node.args[0])
        if make in (float, int, complex) and not isinstance(arg, (str, int, float)):
            raise ValueError("a number from a number or a string")
        if make is int and isinstance(arg, str) and len(arg) > 1000:
            raise ValueError("a long digit string")
        return make(arg)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_value(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else (items if isinstance(node, ast.List) else set(items))
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("no ** in a literal")
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values) if k is not None}
    if any(isinstance(n, ast.Name) for n in ast.walk(node)):
        raise ValueError("a name")
    return ast.literal_eval(node)


def _literal(node: ast.expr) -> tuple[bool, Any]:
    """``(True, value)`` when ``node`` is a literal (or a builtin constructor of one), read without running it."""
    try:
        return True, _value(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, OverflowError):
        return False, None


def probe_of(stmt: ast.stmt, typed: bool, scoped: bool = False) -> Step | None:
    """The probe an assertion becomes, or ``None`` when it must run in the sandbox as written (``scoped``: it is
    evaluated with a check function's parameter bound)."""

    def _probe_ok(expr: ast.expr) -> bool:
        banned = _NEVER + _SCOPED if scoped else _NEVER
        return not any(isinstance(n, banned) for n in ast.walk(expr))

    if not isinstance(stmt, ast.Assert):
        return None
    t = stmt.test
    if isinstance(t, ast.Compare) and len(t.ops) == 1:
        left, right, op = t.left, t.comparators[0], t.ops[0]
        if isinstance(op, ast.Eq):
            ok, value = _literal(right)
            expr = left
            if not ok:
                ok, value = _literal(left)
                expr = right
            if ok and not _literal(expr)[0] and _probe_ok(expr):
                return Step("probe", ast.unparse(expr), expect=Expect(value, "eq", typed))
            return None
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value in (
                None, True, False) and type(right.value) in (type(None), bool) and _probe_ok(left):
            return Step("probe", ast.unparse(left),
                        expect=Expect(right.value, "is" if isinstance(op, ast.Is) else "is_not"))
        return None
    if isinstance(t, ast.Compare) or isinstance(t, ast.Constant):
        return None
    want = True
    if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
        t, want = t.operand, False
    if _probe_ok(t) and not isinstance(t, ast.Constant):
        return Step("probe", ast.unparse(t), expect=Expect(want, "truth"))
    return None


# calls whose value depends on the object's identity or type, not on plain data: such an assertion runs as written
_DENY = frozenset({"type", "isinstance", "issubclass", "id", "hash", "repr", "vars", "dir", "getattr", "hasattr",
                   "callable", "iter", "next", "print", "input", "open", "eval", "exec", "globals", "locals",
                   "compile", "__import__", "setattr", "delattr", "object", "super", "format", "ascii"})
_JUDGED = frozenset(JUDGE_FUNCS)


class _Unsupported(Exception):
    pass


def judged_of(stmt: ast.stmt, typed: bool, scoped: bool = False, math_ok: bool = False) -> list[Step] | None:
    """An assertion whose expression is evaluated here, over the values of its sub-expressions that need the
    program (calls, names of the test or the program), each sent by the sandbox in evaluation order. ``None`` when
    it has no such part, or a part this side does not evaluate (comprehensions, lambdas, ``type()`` ...)."""
    if not isinstance(stmt, ast.Assert):
        return None
    probes: list[tuple[str, bool]] = []
    banned = _NEVER + _SCOPED if scoped else _NEVER

    def probe(n: ast.expr, truth: bool) -> ast.expr:
        if any(isinstance(x, banned) for x in ast.walk(n)):
            raise _Unsupported
        for x in ast.walk(n):
            if isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id in _DENY:
                raise _Unsupported
            if isinstance(x, ast.Name) and x.id.startswith("__slot_"):
                raise _Unsupported
        probes.append((ast.unparse(n), truth))
        return ast.Name(id=f"__slot_{len(probes) - 1}", ctx=ast.Load())

    def conv(n: ast.expr, truth: bool) -> ast.expr:
        if isinstance(n, ast.Constant):
            return n
        if isinstance(n, ast.Name):
            if n.id in _DENY:
                raise _Unsupported
            return n if n.id in _JUDGED else probe(n, truth)
        if isinstance(n, ast.Attribute):
            if math_ok and isinstance(n.value, ast.Name) and n.value.id == "math" and n.attr in MATH_NAMES:
                return n
            return probe(n, truth)
        if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
            if any(isinstance(e, ast.Starred) for e in n.elts):
                raise _Unsupported
            return type(n)(elts=[conv(e, False) for e in n.elts], ctx=ast.Load()) if not isinstance(n, ast.Set) \
                else ast.Set(elts=[conv(e, False) for e in n.elts])
        if isinstance(n, ast.Dict):
            if any(k is None for k in n.keys):
                raise _Unsupported
            return ast.Dict(keys=[conv(k, False) for k in n.keys if k is not None],
                            values=[conv(v, False) for v in n.values])
        if isinstance(n, ast.UnaryOp):
            return ast.UnaryOp(op=n.op, operand=conv(n.operand, isinstance(n.op, ast.Not)))
        if isinstance(n, ast.BinOp):
            return ast.BinOp(left=conv(n.left, False), op=n.op, right=conv(n.right, False))
        if isinstance(n, ast.BoolOp):
            first = conv(n.values[0], truth)
            rest = []
            for v in n.values[1:]:  # evaluated only when reached: no sandbox value may be needed there
                before = len(probes)
                rest.append(conv(v, truth))
                if len(probes) > before:
                    raise _Unsupported
            return ast.BoolOp(op=n.op, values=[first, *rest])
        if isinstance(n, ast.Compare):
            return ast.Compare(left=conv(n.left, False), ops=n.ops, comparators=[conv(c, False) for c in n.comparators])
        if isinstance(n, ast.Subscript):
            s = n.slice
            part: ast.expr
            if isinstance(s, ast.Slice):
                part = ast.Slice(*(None if p is None else conv(p, False) for p in (s.lower, s.upper, s.step)))
            else:
                part = conv(s, False)
            return ast.Subscript(value=conv(n.value, False), slice=part, ctx=ast.Load())
        if isinstance(n, ast.Call):
            f = n.func
            judged = (isinstance(f, ast.Name) and f.id in _JUDGED) or (
                math_ok and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math"
                and f.attr in MATH_NAMES)
            if not judged:
                return probe(n, truth)
            if any(isinstance(a, ast.Starred) for a in n.args) or any(k.arg is None for k in n.keywords):
                raise _Unsupported
            return ast.Call(func=f, args=[conv(a, False) for a in n.args],
                            keywords=[ast.keyword(arg=k.arg, value=conv(k.value, False)) for k in n.keywords])
        raise _Unsupported

    try:
        top = conv(stmt.test, True)
    except (_Unsupported, RecursionError):
        return None
    if not probes:
        return None
    source = ast.unparse(ast.fix_missing_locations(ast.Expression(body=top)))
    steps = [Step("probe", src, expect=Expect(None, "slot"), truth=truth) for src, truth in probes]
    last = steps[-1]
    steps[-1] = Step("probe", last.source, expect=Expect((source, typed), "judge"), truth=last.truth)
    return steps


def _noop(stmt: ast.stmt) -> bool:
    """A docstring, ``pass`` or ``assert <true constant>``: nothing to run."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    return isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Constant) and bool(stmt.test.value)


def _imports_math(tree: ast.Module) -> bool:
    """``math.<name>`` is evaluated here only where the test imports ``math`` itself, at its top level."""
    return any(isinstance(s, ast.Import) and any(a.name == "math" and a.asname is None for a in s.names)
               for s in tree.body)


def module_steps(test: str, typed: bool) -> list[Step]:
    """The steps of a test module of assertions (MBPP's, LCBench's): each top-level assertion a probe where it can
    be one; the other statements run in the sandbox as written, in order."""
    if not test.strip():
        return []
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [Step("exec", test)]  # fails in the sandbox, as the reference's run of it does
    steps: list[Step] = []
    math_ok = _imports_math(tree)
    for stmt in tree.body:
        judged = judged_of(stmt, typed, math_ok=math_ok)
        if judged is not None:
            steps.extend(judged)
            continue
        probe = probe_of(stmt, typed)
        if probe is not None:
            steps.append(probe)
            continue
        t = getattr(stmt, "test", None)
        if typed and isinstance(stmt, ast.Assert) and isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(
                t.ops[0], ast.Eq):
            # an identity or type test (``type(f(x)) == int``): compared in the sandbox by the harness's own
            # type-aware equality, as the reference compares it
            steps.append(Step("eq", ast.unparse(t.left), name=ast.unparse(t.comparators[0])))
            continue
        src = ast.unparse(stmt)
        if steps and steps[-1].kind == "exec":
            steps[-1] = Step("exec", steps[-1].source + "\n" + src)
        else:
            steps.append(Step("exec", src))
    return steps


def check_function_steps(test: str, entry: str, function: str = "check") -> list[Step] | None:
    """The steps of a test that defines ``def check(candidate): <assertions>`` and is then called on ``entry``:
    the module runs as written (defining ``check``), ``candidate`` is bound to the program's ``entry``, and each
    assertion of the body is a probe. ``None`` when the body is more than probes (loops, tolerances, local names):
    the caller then runs the test and the call in the sandbox as written."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not entry.isidentifier():
        return None
    funcs = [s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == function]
    if len(funcs) != 1:
        return None
    fn = funcs[0]
    a = fn.args
    if fn.decorator_list or a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults or len(a.args) != 1:
        return None
    param = a.args[0].arg
    probes: list[Step] = []
    for stmt in fn.body:
        if _noop(stmt):
            continue
        judged = judged_of(stmt, typed=False, scoped=True, math_ok=_imports_math(tree))
        if judged is not None:
            probes.extend(judged)
            continue
        probe = probe_of(stmt, typed=False, scoped=True)
        if probe is None:
            return None
        probes.append(probe)
    return [Step("exec", test), Step("bind", entry, name=param), *probes]


def expectations(steps: list[Step]) -> list[Expect]:
    return [s.expect for s in steps if s.kind == "probe" and s.expect is not None]


__all__ = ["Step", "check_function_steps", "expectations", "module_steps", "probe_of"]
