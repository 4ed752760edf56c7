"""A test's source split into steps, so that the assertions that can be judged outside the sandbox are.

An assertion ``assert <expr> == <literal>`` (or ``<literal> == <expr>``, ``assert <expr>``, ``assert not <expr>``,
``assert <expr> is None/True/False``) becomes a *probe*: the sandbox evaluates only ``<expr>`` and sends its value;
the literal stays here and the comparison is made by :class:`promptweave.evaluate.code_verdict.Verdict`. Every other
statement is run inside the sandbox as written (``exec``), in order, in the program's namespace, as before; with
``typed`` (MBPP, LCBench), a top-level ``assert a == b`` whose right side is not a literal is split in two: the
sandbox sends both sides' values and they are compared here too. The helper the old rewrite looked up by name is
gone: nothing is bound in the program's namespace.

Parsing is all that happens here: nothing of the test runs in this process (``ast.literal_eval`` reads literals).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from promptweave.evaluate.code_verdict import Expect

# inside a check function, names of its scope are not seen by these (they would look the name up globally)
_SCOPED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)
_NEVER = (ast.Await, ast.Yield, ast.YieldFrom)


@dataclass(frozen=True)
class Step:
    """One step of a test, run in the sandbox in order: ``exec`` (statements), ``probe`` (``source`` evaluated,
    its value sent; ``expect`` stays here) or ``bind`` (``name`` bound to the value of ``source`` for the probes
    that follow: a check function's parameter)."""

    kind: str
    source: str
    name: str = ""
    expect: Expect | None = field(default=None, compare=False)

    def wire(self) -> dict[str, Any]:
        """What the sandbox is sent: never the expected value."""
        out: dict[str, Any] = {"k": self.kind, "src": self.source}
        if self.kind == "bind":
            out["as"] = self.name
        if self.kind == "probe" and self.expect is not None and self.expect.how == "truth":
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


def _noop(stmt: ast.stmt) -> bool:
    """A docstring, ``pass`` or ``assert <true constant>``: nothing to run."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    return isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Constant) and bool(stmt.test.value)


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
    for stmt in tree.body:
        probe = probe_of(stmt, typed)
        if probe is not None:
            steps.append(probe)
            continue
        t = getattr(stmt, "test", None)
        if typed and isinstance(stmt, ast.Assert) and isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(
                t.ops[0], ast.Eq) and not any(isinstance(n, _NEVER) for n in ast.walk(t)):
            # both sides evaluated in the sandbox, in order, and compared here
            steps.append(Step("probe", ast.unparse(t.left), expect=Expect(None, "left", True)))
            steps.append(Step("probe", ast.unparse(t.comparators[0]), expect=Expect(None, "right", True)))
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
        probe = probe_of(stmt, typed=False, scoped=True)
        if probe is None:
            return None
        probes.append(probe)
    return [Step("exec", test), Step("bind", entry, name=param), *probes]


def expectations(steps: list[Step]) -> list[Expect]:
    return [s.expect for s in steps if s.kind == "probe" and s.expect is not None]


__all__ = ["Step", "check_function_steps", "expectations", "module_steps", "probe_of"]
