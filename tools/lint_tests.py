"""Checks of the test suite that a green run depends on and ruff does not make (run by ``.ci/test_lint.sh``):

- every test asserts something: a ``test_*`` function holds an ``assert``, a ``raises`` / ``warns`` / ``fail``,
  or calls a helper of the tests tree that does (helpers are matched by name, transitively);
- no ``except`` in a test swallows what it caught (a handler whose body is only ``pass`` / ``...``; a
  ``continue`` / ``return`` that leaves a case out of a loop or a property is explicit and allowed);
- no ``assert A or B`` where a disjunct is implied by an earlier assert of the same test (``"x" in t`` after
  ``"xy" in t``) or by its sibling (``s == p + q or s.startswith(p)``), which makes the ``or`` check nothing.

Usage: ``python tools/lint_tests.py [PATH ...]`` (default ``tests``); prints ``file:line: what`` and exits 1 on a
finding.
"""
from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CHECKING_CALLS = {"raises", "warns", "fail", "deprecated_call", "assert_called", "check_output", "check_call"}


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _called_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def _checks_directly(fn: ast.AST) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and _called_name(node) in CHECKING_CALLS:
            return True
    return False


def _calls(fn: ast.AST) -> set[str]:
    return {n for node in ast.walk(fn) if isinstance(node, ast.Call) and (n := _called_name(node))}


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _checking_helpers(trees: dict[Path, ast.Module]) -> set[str]:
    """Names of functions (anywhere in the tree) that check something themselves or through another such one."""
    calls: dict[str, set[str]] = {}
    checking: set[str] = set()
    for tree in trees.values():
        for fn in _functions(tree):
            calls.setdefault(fn.name, set()).update(_calls(fn))
            if _checks_directly(fn):
                checking.add(fn.name)
    for tree in trees.values():  # a class whose methods check counts by its name (a stand-in that asserts)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(_checks_directly(m) for m in node.body):
                checking.add(node.name)
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name not in checking and called & checking:
                checking.add(name)
                changed = True
    return checking


def _is_test(fn: ast.AST) -> bool:
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("test_")


def _swallows(handler: ast.ExceptHandler) -> bool:
    body = handler.body
    return all(isinstance(s, ast.Pass)
               or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) for s in body)


def _conjuncts(test: ast.expr) -> list[ast.expr]:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [c for v in test.values for c in _conjuncts(v)]
    return [test]


def _contains_const(e: ast.expr) -> tuple[str, str] | None:
    """``"s" in t`` as (s, dump of t)."""
    if (isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], ast.In)
            and isinstance(e.left, ast.Constant) and isinstance(e.left.value, str)):
        return e.left.value, ast.dump(e.comparators[0])
    return None


def _implied(d: ast.expr, earlier: list[ast.expr], siblings: list[ast.expr]) -> str | None:
    dump = ast.dump(d)
    for e in earlier:
        if ast.dump(e) == dump:
            return "the same check as an earlier assert"
        mine, theirs = _contains_const(d), _contains_const(e)
        if mine and theirs and mine[1] == theirs[1] and mine[0] in theirs[0]:
            return f"{mine[0]!r} is inside {theirs[0]!r}, which an earlier assert found"
    if (isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "startswith"
            and len(d.args) == 1):
        who, prefix = ast.dump(d.func.value), ast.dump(d.args[0])
        for s in siblings:
            if (isinstance(s, ast.Compare) and len(s.ops) == 1 and isinstance(s.ops[0], ast.Eq)
                    and ast.dump(s.left) == who and isinstance(s.comparators[0], ast.BinOp)
                    and ast.dump(s.comparators[0].left) == prefix):
                return "a sibling `==` already starts with the prefix"
    return None


def _or_findings(path: Path, fn: ast.AST) -> Iterator[Finding]:
    earlier: list[ast.expr] = []
    asserts = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Assert)), key=lambda n: (n.lineno, n.col_offset))
    for node in asserts:
        conj = _conjuncts(node.test)
        for c in ast.walk(node.test):
            if isinstance(c, ast.BoolOp) and isinstance(c.op, ast.Or):
                for d in c.values:
                    why = _implied(d, earlier, [s for s in c.values if s is not d])
                    if why:
                        yield Finding(path, node.lineno, f"an `or` in this assert checks nothing more: {why}")
                        break
        earlier.extend(conj)


def lint(paths: list[Path]) -> list[Finding]:
    files = sorted({f for p in paths for f in ([p] if p.is_file() else p.rglob("*.py"))})
    trees = {f: ast.parse(f.read_text(encoding="utf-8"), filename=str(f)) for f in files}
    checking = _checking_helpers(trees)
    found: list[Finding] = []
    for path, tree in trees.items():
        for fn in _functions(tree):
            if not _is_test(fn):
                continue
            if fn.name not in checking:
                found.append(Finding(path, fn.lineno, f"{fn.name} asserts nothing (no assert, raises or checking "
                                                      "helper)"))
            for node in ast.walk(fn):
                if isinstance(node, ast.ExceptHandler) and _swallows(node):
                    found.append(Finding(path, node.lineno, f"{fn.name}: this except swallows what it caught"))
            found.extend(_or_findings(path, fn))
    return found


def main(argv: list[str]) -> int:
    found = lint([Path(a) for a in argv] or [Path("tests")])
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} finding(s) in the tests (tools/lint_tests.py)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
