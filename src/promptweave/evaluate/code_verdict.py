"""The judge's side of a code run: what the sandboxed process reports is data, and the verdict is decided here.

The sandboxed process (``code_harness``) runs the model's program and then the test's steps. For each *probe* (an
assertion split by :mod:`promptweave.evaluate.code_plan`: ``assert f(x) == <literal>``), it writes only the value
the program produced, encoded as tagged JSON; the expected value never enters the sandbox, and the comparison is made
here, in this process, which the program cannot reach. A program that writes records of its own can only claim
values, which is what returning those values would have done. Records are one JSON object per line:

- ``{"v": <encoded value>}``: the value of the next probe;
- ``{"x": "assert" | "error"}``: a step raised (an ``AssertionError``, or anything else), and the run ended;
- ``{"done": 1}``: every step ran.

:class:`Verdict` reads them in order and decides: ``wrong_answer`` at the first probe whose value differs, ``pass``
only at ``done`` after every probe matched, ``failed`` for anything malformed or missing. Steps that could not be
split (an assertion inside a loop, a tolerance) ran inside the program's process, as the reference harnesses run
them; for those the process's own ``x``/``done`` is the verdict.
"""
from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 200  # nesting of one encoded value (the harness encodes deeper values as opaque)


class BadRecord(ValueError):
    """A record that the harness would never write (only the program under test can have written it)."""


class Opaque:
    """A value the harness could not encode (an object of the program's own class, a numpy array ...): equal to no
    expected value, and not ``None``, ``True`` or ``False``."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<opaque {self.type_name}>"


def _floats(x: Any) -> float:
    if not isinstance(x, str) or len(x) > 64:
        raise BadRecord("a float is encoded as its hex string")
    try:
        return float.fromhex(x)
    except (ValueError, OverflowError):
        raise BadRecord("not a float hex string") from None


def _items(x: Any, depth: int) -> list[Any]:
    if not isinstance(x, list):
        raise BadRecord("a container's items are a list")
    return [decode(i, depth + 1) for i in x]


def decode(obj: Any, depth: int = 0) -> Any:
    """A value from its tagged JSON form (raises :class:`BadRecord` on any shape the harness does not write)."""
    if depth > MAX_DEPTH:
        raise BadRecord("nested too deep")
    if obj is None or isinstance(obj, bool):
        return obj
    if not isinstance(obj, dict) or len(obj) != 1:
        raise BadRecord("a value is null, a boolean or a one-key object")
    (tag, x), = obj.items()
    try:
        if tag == "i":
            if not isinstance(x, str) or len(x) > 1 << 20:
                raise BadRecord("an int is a hex string")
            return int(x, 16)
        if tag == "f":
            return _floats(x)
        if tag == "c":
            if not isinstance(x, list) or len(x) != 2:
                raise BadRecord("a complex is two floats")
            return complex(_floats(x[0]), _floats(x[1]))
        if tag == "s":
            if not isinstance(x, str):
                raise BadRecord("a str is a JSON string")
            return x
        if tag == "b":
            if not isinstance(x, str):
                raise BadRecord("bytes are a hex string")
            return bytes.fromhex(x)
        if tag == "l":
            return _items(x, depth)
        if tag == "t":
            return tuple(_items(x, depth))
        if tag == "set":
            return set(_items(x, depth))
        if tag == "fs":
            return frozenset(_items(x, depth))
        if tag == "d":
            if not isinstance(x, list) or not all(isinstance(p, list) and len(p) == 2 for p in x):
                raise BadRecord("a dict is a list of pairs")
            return {decode(k, depth + 1): decode(v, depth + 1) for k, v in x}
        if tag == "o":
            return Opaque(x if isinstance(x, str) else "?")
    except (TypeError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        if isinstance(exc, BadRecord):
            raise
        raise BadRecord(f"not a value ({type(exc).__name__})") from None
    raise BadRecord(f"unknown tag {tag!r}")


def type_aware_equal(a: Any, b: Any) -> bool:
    """``a == b`` that also needs the same types, all the way down (``1 != 1.0``, ``(1,) != [1]``), so an object
    with a forged ``__eq__`` never equals a plain value."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(type_aware_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        left = list(b.items())
        for k, v in a.items():
            for i, (k2, v2) in enumerate(left):
                if type_aware_equal(k, k2) and type_aware_equal(v, v2):
                    del left[i]
                    break
            else:
                return False
        return True
    if isinstance(a, (set, frozenset)):
        if len(a) != len(b):
            return False
        rest = list(b)
        for x in a:
            for i, y in enumerate(rest):
                if type_aware_equal(x, y):
                    del rest[i]
                    break
            else:
                return False
        return True
    try:
        r = a == b
    except Exception:
        return False
    return type(r) is bool and r


@dataclass(frozen=True)
class Expect:
    """What one probe's value must be: ``how`` is ``eq`` (``==``, or type-aware when ``typed``), ``is``/``is_not``
    (``value`` is ``None``, ``True`` or ``False``), ``truth`` (the harness sends ``bool(x)``), ``left`` then
    ``right``: two values that must be equal to each other (an assertion whose both sides the sandbox computes),
    or ``slot``... then ``judge``: the values of an assertion's sub-expressions, the last one carrying
    ``value = (expression, typed)``, evaluated here by :func:`judge_eval`."""

    value: Any
    how: str = "eq"
    typed: bool = False

    def holds(self, got: Any) -> bool:
        if self.how == "is":
            return got is self.value
        if self.how == "is_not":
            return got is not self.value
        if self.how == "truth":
            return type(got) is bool and got is self.value
        if self.typed:
            return type_aware_equal(got, self.value)
        if isinstance(got, Opaque):
            return False
        try:
            r = got == self.value
        except RecursionError:
            return False
        return r is True


class Verdict:
    """Reads the harness's records in order (``feed``) and decides; ``result`` is ``None`` until decided."""

    def __init__(self, expects: Sequence[Expect]) -> None:
        self.expects = list(expects)
        self.matched = 0
        self.result: str | None = None
        self._left: Any = None
        self._slots: list[Any] = []

    def feed(self, line: bytes) -> str | None:
        if self.result is not None:
            return self.result
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            return None  # not a record: stray bytes written to the report fd
        if not isinstance(rec, dict) or len(rec) != 1:
            return None
        (key, val), = rec.items()
        if key == "v":
            if self.matched >= len(self.expects):
                self.result = "failed"  # more values than probes: not the harness
                return self.result
            try:
                got = decode(val)
            except BadRecord:
                self.result = "failed"
                return self.result
            expect = self.expects[self.matched]
            if expect.how == "slot":
                self._slots.append(got)
            elif expect.how == "judge":
                source, typed = expect.value
                slots, self._slots = [*self._slots, got], []
                try:
                    holds = bool(judge_eval(ast.parse(source, mode="eval"), slots, typed))
                except (JudgeError, SyntaxError, ValueError):
                    self.result = "failed"  # the assertion raised, as it would have in the sandbox
                    return self.result
                if not holds:
                    self.result = "wrong_answer"
                    return self.result
            elif expect.how == "left":
                self._left = got
            elif expect.how == "right":
                if not type_aware_equal(self._left, got):
                    self.result = "wrong_answer"
                    return self.result
            elif not expect.holds(got):
                self.result = "wrong_answer"
                return self.result
            self.matched += 1
        elif key == "x":
            self.result = "wrong_answer" if val == "assert" else "failed"
        elif key == "done":
            self.result = "pass" if self.matched == len(self.expects) else "failed"
        return self.result




# -- assertions evaluated here, over the values the sandbox sent ----------------------------------------------------
# The builtins an assertion may apply to the program's values on this side: pure functions of plain data, each
# bounded below where its cost depends on a value.
JUDGE_FUNCS: dict[str, Any] = {"abs": abs, "len": len, "round": round, "sorted": sorted, "set": set,
                                "frozenset": frozenset, "tuple": tuple, "list": list, "dict": dict, "min": min,
                                "max": max, "sum": sum, "all": all, "any": any, "int": int, "float": float,
                                "str": str, "bool": bool, "complex": complex}
MATH_NAMES = ("isclose", "fabs", "sqrt", "floor", "ceil", "isnan", "isinf", "isfinite", "pi", "e", "inf", "nan")
MAX_JUDGED_SIZE = 1 << 22  # the longest string or list an operation here may build


class JudgeError(Exception):
    """An assertion could not be evaluated over the values (the reference's run would have raised too)."""


def _sized(x: Any) -> Any:
    if isinstance(x, (str, bytes, list, tuple)) and len(x) > MAX_JUDGED_SIZE:
        raise JudgeError("too large")
    if isinstance(x, int) and not isinstance(x, bool) and x.bit_length() > 1 << 20:
        raise JudgeError("too large")
    return x


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    import operator

    if isinstance(op, ast.Pow):
        if isinstance(a, int) and isinstance(b, int) and b * max(1, abs(a).bit_length()) > 1 << 20:
            raise JudgeError("exponent too large")
        return _sized(a ** b)
    if isinstance(op, ast.Mult):
        n = b if isinstance(a, (str, bytes, list, tuple)) else a if isinstance(b, (str, bytes, list, tuple)) else None
        seq = a if n is b else b
        if isinstance(n, int) and n * len(seq) > MAX_JUDGED_SIZE:
            raise JudgeError("too large")
    if isinstance(op, ast.LShift) and isinstance(b, int) and b > 1 << 20:
        raise JudgeError("too large")
    fn = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift,
          ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitAnd: operator.and_,
          ast.BitXor: operator.xor}.get(type(op))
    if fn is None:
        raise JudgeError("operator")
    return _sized(fn(a, b))


def _compare(op: ast.cmpop, a: Any, b: Any, typed: bool) -> bool:
    if isinstance(op, ast.Eq):
        return type_aware_equal(a, b) if typed else bool(a == b)
    if isinstance(op, ast.NotEq):
        return bool(a != b)
    if isinstance(op, ast.Is):
        return a is b
    if isinstance(op, ast.IsNot):
        return a is not b
    if isinstance(op, ast.In):
        return a in b
    if isinstance(op, ast.NotIn):
        return a not in b
    import operator

    fn = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}[type(op)]
    return bool(fn(a, b))


def judge_eval(node: ast.AST, slots: Sequence[Any], typed_top: bool = False) -> Any:
    """Evaluate an assertion's expression as planned by ``code_plan`` (``__slot_<i>``: the i-th value sent), with
    only the operations above; anything else is a :class:`JudgeError`. ``typed_top``: a top-level ``==`` compares
    type-aware (MBPP's rule)."""

    def ev(n: ast.AST, top: bool = False) -> Any:
        if isinstance(n, ast.Expression):
            return ev(n.body, top)
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            if n.id.startswith("__slot_"):
                return slots[int(n.id[len("__slot_"):])]
            if n.id in JUDGE_FUNCS:
                return JUDGE_FUNCS[n.id]
            raise JudgeError(f"name {n.id}")
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "math" and (
                n.attr in MATH_NAMES):
            import math

            return getattr(math, n.attr)
        if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
            items = [ev(e) for e in n.elts]
            return tuple(items) if isinstance(n, ast.Tuple) else items if isinstance(n, ast.List) else set(items)
        if isinstance(n, ast.Dict):
            return {ev(k): ev(v) for k, v in zip(n.keys, n.values) if k is not None}
        if isinstance(n, ast.UnaryOp):
            v = ev(n.operand)
            if isinstance(n.op, ast.Not):
                return not v
            if isinstance(n.op, ast.USub):
                return -v
            if isinstance(n.op, ast.UAdd):
                return +v
            return ~v
        if isinstance(n, ast.BinOp):
            return _binop(n.op, ev(n.left), ev(n.right))
        if isinstance(n, ast.BoolOp):
            out = ev(n.values[0])
            for v in n.values[1:]:
                if isinstance(n.op, ast.And) and not out or isinstance(n.op, ast.Or) and out:
                    return out
                out = ev(v)
            return out
        if isinstance(n, ast.Compare):
            left = ev(n.left)
            for op, right_node in zip(n.ops, n.comparators):
                right = ev(right_node)
                if not _compare(op, left, right, typed_top and top and len(n.ops) == 1):
                    return False
                left = right
            return True
        if isinstance(n, ast.Subscript):
            value = ev(n.value)
            s = n.slice
            if isinstance(s, ast.Slice):
                return _sized(value[slice(*(None if p is None else ev(p) for p in (s.lower, s.upper, s.step)))])
            return value[ev(s)]
        if isinstance(n, ast.Call):
            fn = ev(n.func)
            args = [ev(a) for a in n.args]
            kwargs = {k.arg: ev(k.value) for k in n.keywords if k.arg is not None}
            return _sized(fn(*args, **kwargs))
        raise JudgeError(type(n).__name__)

    try:
        return ev(node, True)
    except JudgeError:
        raise
    except RecursionError:
        raise JudgeError("nested too deep") from None
    except Exception as exc:  # the values did not support the operation: the assertion raised
        raise JudgeError(type(exc).__name__) from None


__all__ = ["BadRecord", "Expect", "JUDGE_FUNCS", "JudgeError", "MATH_NAMES", "MAX_DEPTH", "Opaque", "Verdict", "decode", "judge_eval",
           "type_aware_equal"]
