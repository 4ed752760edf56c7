"""Game of 24 (OpenCompass's ``game24_postprocess`` and ``Game24Evaluator``), reimplemented.

An answer is right when it uses exactly the puzzle's numbers (compared as the digit runs of both texts) and
evaluates to 24. The reference asks sympy to simplify the answer, which evaluates model output as Python; here
the expression is read with ``ast`` and computed in exact fractions from numbers, ``+ - * /``, unary signs,
parentheses and ``^``/``**`` with a small whole exponent, so no model text ever runs. Anything else scores 0,
as an expression sympy cannot read does.
"""
from __future__ import annotations

import ast
import re
from fractions import Fraction
from typing import Any

from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths

_MAX_EXPONENT = 64  # a larger power cannot come back to 24 from the puzzle's small numbers, and is costly
_MAX_TEXT = 10_000


def game24_postprocess(output: Any) -> str:
    """The expression of the answer's last line (``Answer: <expr> = 24`` -> ``<expr> ``)."""
    return str(output).strip().split("\n")[-1].lower().replace("answer: ", "").split("=")[0]


def _value(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return Fraction(str(node.value)) if isinstance(node.value, float) else Fraction(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        v = _value(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            return a / b  # ZeroDivisionError: not 24
        if isinstance(node.op, ast.Pow) and b.denominator == 1 and abs(b) <= _MAX_EXPONENT:
            return a ** int(b)
    raise ValueError("not plain arithmetic")


def equals_24(expression: str) -> bool:
    """True when ``expression`` is plain arithmetic whose exact value is 24."""
    if len(expression) > _MAX_TEXT:
        return False
    try:
        return _value(ast.parse(expression.strip().replace("^", "**"), mode="eval")) == 24
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError, MemoryError, OverflowError):
        return False


def uses_the_numbers(prediction: str, puzzle: str) -> bool:
    return sorted(re.findall(r"\d+", prediction)) == sorted(re.findall(r"\d+", puzzle))


class Game24Evaluator(Evaluator):
    """``acc score``: the share (0-1, as the reference reports it) of answers that use the puzzle's numbers and
    make 24."""

    name = "Game24Evaluator"

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        correct = []
        for p, r in zip(predictions, references):
            p, r = str(p if p is not None else ""), str(r if r is not None else "")
            correct.append(uses_the_numbers(p, r) and equals_24(p))
        n = len(correct)
        return Scores({"acc score": sum(correct) / n if n else 0.0}, correct,
                      [{"pred": p, "answer": r, "correct": c} for p, r, c in zip(predictions, references, correct)])
