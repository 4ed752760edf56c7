"""Jinja for untrusted templates (a tokenizer's chat template), inside budgets like the config sandbox's.

jinja2's :class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` stops attribute escapes, but not
work: ``range(10**9)``, ``9 ** (9 ** 9)``, ``'x' * 10**10``, nested loops, macro recursion and
``join`` bombs all run until memory or patience runs out. :class:`BudgetedEnvironment` keeps the
sandbox and adds, per render, a :class:`~promptweave.sandbox.budget.Meter` that every call,
attribute and item lookup, intercepted operator and loop iteration ticks, and checks each size
*before* the work (integers in bits, strings and containers in items, widths in format specs,
the rendered text in total). ``{% include %}``, ``{% import %}`` and ``{% extends %}`` are refused
when the template is compiled: a chat template is one string and reads nothing else.
Every refusal is a :class:`~promptweave.errors.ChatTemplateError` naming the budget.
"""
from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from promptweave.errors import ChatTemplateError
from promptweave.sandbox.budget import Budget, Meter

# Real chat templates (tools, long conversations) take a few thousand steps; the rendered prompt of a
# long-context row is at most a few million characters.
TEMPLATE_BUDGET = Budget(max_steps=300_000, max_seconds=5.0, max_depth=60, max_int_bits=10_000,
                         max_str_len=10_000_000, max_items=100_000, max_alloc=100_000_000)
MAX_SOURCE_CHARS = 1_000_000
_MAX_INDENT = 64


@dataclass
class TemplateMeter(Meter):
    """A meter whose refusals are chat-template errors naming the template file."""

    def refuse(self, what: str, limit: str) -> ChatTemplateError:  # type: ignore[override]
        return ChatTemplateError(f"{what}: refused before doing it (budget {limit}); a tokenizer's chat template "
                                 "is untrusted input and renders inside fixed budgets", file=self.file or None,
                                 field="chat_template", expected="the template the model's repository ships")


_current: ContextVar[TemplateMeter | None] = ContextVar("promptweave_template_meter", default=None)


def _meter() -> TemplateMeter:
    meter = _current.get()
    if meter is None:  # rendered outside render_budgeted: each size is still checked, steps are not summed
        return TemplateMeter(TEMPLATE_BUDGET)
    return meter


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)) else 0


def _measure(value: Any, what: str) -> Any:
    """Charge a value built by template code to the budget (after the fact, for what no pre-check covers)."""
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)):
        meter = _meter()
        meter.check_len(len(value), what, text=isinstance(value, (str, bytes)))
        meter.alloc(len(value))
    return value


def _width(n: Any, what: str) -> None:
    if isinstance(n, int) and not isinstance(n, bool):
        _meter().check_len(n, what, text=True)


_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")


def _check_format(fmt: str, args: Iterable[Any] = ()) -> None:
    """Refuse width/precision bombs in ``str.format`` / ``%`` / ``|format`` specs before formatting."""
    if "%" in fmt:
        for width, precision in _PERCENT_SPEC.findall(fmt):
            for n in (width, precision):
                if n == "*":  # widths from the arguments
                    for a in args:
                        _width(a, "a '%*' width")
                elif n:
                    _width(int(n) if len(n) < 12 else 10 ** 12, "a '%' format width")
    if "{" in fmt:
        try:
            fields = list(string.Formatter().parse(fmt))
        except ValueError:
            return  # str.format raises its own ValueError, turned into a typed error by the renderer
        for _, _, spec, _ in fields:
            if not spec:
                continue
            if "{" in spec:
                raise _meter().refuse("a format spec taken from the arguments ('{:{w}}')", "max_str_len")
            for n in _DIGITS.findall(spec):
                _width(int(n) if len(n) < 12 else 10 ** 12, "a format width")


def _checked_str_method(obj: str, name: str, args: tuple, kwargs: dict) -> None:
    """Size checks for the str methods that can build far more than they are given."""
    meter = _meter()
    if name in ("center", "ljust", "rjust", "zfill") and args:
        _width(args[0], f"str.{name}")
    elif name == "expandtabs":
        size = kwargs.get("tabsize", args[0] if args else 8)
        if isinstance(size, int):
            meter.check_len(len(obj) + obj.count("\t") * max(size, 0), "str.expandtabs", text=True)
    elif name == "replace" and len(args) >= 2:
        _check_replace(obj, args[0], args[1], args[2] if len(args) > 2 else -1)
    elif name == "join" and args:
        _check_join(obj, args[0])


def _check_replace(text: Any, old: Any, new: Any, count: Any = -1) -> None:
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)):
        return
    hits = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    _meter().check_len(len(text) + hits * (len(new) - len(old)), "a replace", text=True)


def _check_join(sep: Any, items: Any) -> None:
    if not isinstance(items, (list, tuple, str, dict, set, frozenset)):
        return
    n = len(items)
    total = (n - 1) * len(str(sep)) if n else 0
    for x in items:
        total += len(x) if isinstance(x, str) else 32
    meter = _meter()
    meter.check_len(total, "a join", text=True)
    meter.alloc(total)


_SIZED = (str, bytes, list, tuple, dict, set, frozenset)


def _binop_check(meter: TemplateMeter, operator: str, left: Any, right: Any) -> None:
    # the hot path of every template ('+' of two strings) is kept to a few type checks
    if operator == "+":
        if isinstance(left, _SIZED) and isinstance(right, _SIZED):
            n = len(left) + len(right)
            meter.check_len(n, "'+'", text=isinstance(left, (str, bytes)))
            meter.alloc(n)
        return
    ints = isinstance(left, int) and isinstance(right, int)
    if operator == "**" and ints and right > 0:
        meter.check_int_bits(max(abs(left).bit_length(), 1) * right if abs(left) > 1 else 1, "'**'")
    elif operator == "*":
        if ints:
            meter.check_int_bits(abs(left).bit_length() + abs(right).bit_length(), "'*'")
        else:
            seq, n = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(n, int) and _size(seq) and n > 0:
                meter.check_len(_size(seq) * n, "repeating a string or list with '*'", text=isinstance(seq, str))
                meter.alloc(_size(seq) * n)
    elif operator == "%" and isinstance(left, str):
        _check_format(left, right if isinstance(right, tuple) else (right,))


class TemplateRefused(jinja2.TemplateSyntaxError):
    """A construct a chat template may not use, found while compiling (carries the line)."""


class BudgetedEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox, with work and size budgets and no template loading."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["optimized"] = False  # constant folding would run filters at compile time, outside the meter
        super().__init__(*args, **kwargs)
        self.globals["range"] = _budget_range
        self.globals["lipsum"] = _capped_lipsum(self.globals.get("lipsum"))
        for name, fn in list(self.filters.items()):
            self.filters[name] = _budgeted_filter(name, fn)

    def add_filter(self, name: str, fn: Any) -> None:
        """Register a filter inside the budget (filters added after construction)."""
        self.filters[name] = _budgeted_filter(name, fn)

    # -- compile time: the tree is checked and loops / concatenations are routed through the meter
    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        if len(source) > MAX_SOURCE_CHARS:
            raise TemplateRefused(f"the template is {len(source)} characters long (at most {MAX_SOURCE_CHARS})",
                                  1, name, filename)
        tree = super()._parse(source, name, filename)
        for node in tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
            what = {"Include": "include", "Import": "import", "FromImport": "from ... import",
                    "Extends": "extends"}[type(node).__name__]
            raise TemplateRefused(f"{{% {what} %}} is not allowed: a chat template is one string and loads no "
                                  "other template", node.lineno, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Call(nodes.EnvironmentAttribute("pw_iter"), [loop.iter], [], None, None,
                                   lineno=loop.lineno)
        for concat in list(tree.find_all(nodes.Concat)):
            parts = nodes.List(list(concat.nodes), lineno=concat.lineno)
            concat.nodes = [nodes.Call(nodes.EnvironmentAttribute("pw_concat"), [parts], [], None, None,
                                       lineno=concat.lineno)]
        return tree

    # -- run time: every hook ticks the meter
    def pw_iter(self, iterable: Any) -> Iterator[Any]:
        meter = _meter()
        for item in iterable:
            meter.tick()
            yield item

    def pw_concat(self, parts: list[Any]) -> str:
        texts = [p if isinstance(p, str) else str(p) for p in parts]
        meter = _meter()
        total = sum(map(len, texts))
        meter.check_len(total, "'~'", text=True)
        meter.alloc(total)
        return "".join(texts)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        meter = _meter()
        meter.tick()
        _binop_check(meter, operator, left, right)
        return self.binop_table[operator](left, right)

    def getattr(self, obj: Any, attribute: str) -> Any:
        _meter().tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        _meter().tick()
        return super().getitem(obj, argument)

    def wrap_str_format(self, value: Any) -> Any:
        fmt = super().wrap_str_format(value)
        if fmt is None:
            return None

        @functools.wraps(fmt)
        def checked(*args: Any, **kwargs: Any) -> str:
            _check_format(value.__self__, [*args, *kwargs.values()])
            return _measure(fmt(*args, **kwargs), "str.format")

        return checked

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - jinja's form
        meter = _meter()
        meter.tick()
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str):
            _checked_str_method(owner, getattr(__obj, "__name__", ""), args, kwargs)
        meter.enter()
        try:
            result = ImmutableSandboxedEnvironment.call(__self, __context, __obj, *args, **kwargs)
        finally:
            meter.leave()
        return _measure(result, "a call's result")


def _budget_range(*args: Any) -> range:
    if not all(isinstance(a, int) for a in args):
        raise TypeError("range() takes whole numbers")
    rng = range(*args)
    try:
        n = len(rng)
    except OverflowError:
        n = 1 << 62
    _meter().check_len(n, "range()", text=False)
    return rng


def _capped_lipsum(fn: Any) -> Any:
    def lipsum(n: int = 5, *args: Any, **kwargs: Any) -> Any:
        _meter().check_len(n * 100, "lipsum()", text=False)
        return fn(n, *args, **kwargs)

    return lipsum


def _budgeted_filter(name: str, fn: Any) -> Any:
    """A filter that ticks, checks the arguments that set output sizes, and charges its result."""

    @functools.wraps(fn)  # keeps jinja's pass_context / pass_eval_context markers
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        meter = _meter()
        meter.tick()
        rest = [a for a in args if not isinstance(a, (jinja2.runtime.Context, jinja2.nodes.EvalContext,
                                                        jinja2.Environment))]
        value, params = (rest[0], rest[1:]) if rest else (None, [])
        if name == "join":
            _check_join(params[0] if params else kwargs.get("d", ""), value)
        elif name == "replace" and len(params) >= 2:
            _check_replace(value, params[0], params[1], params[2] if len(params) > 2 else kwargs.get("count", -1))
        elif name in ("center", "indent", "wordwrap", "truncate"):
            for n in [*params[:1], kwargs.get("width"), kwargs.get("length")]:
                _width(n, f"|{name}")
            if name == "indent" and value is not None:
                w = params[0] if params else kwargs.get("width", 4)
                if isinstance(w, int):
                    meter.check_len(len(str(value)) * (1 + max(w, 0)), "|indent", text=True)
        elif name == "format" and isinstance(value, str):
            _check_format(value, [*params, *kwargs.values()])
        elif name == "tojson":
            indent = params[1] if len(params) > 1 else kwargs.get("indent")
            if isinstance(indent, int) and indent > _MAX_INDENT:
                raise meter.refuse(f"|tojson with indent={indent}", f"indent<={_MAX_INDENT}")
        elif name in ("slice", "batch"):
            for n in params[:1]:
                if isinstance(n, int):
                    meter.check_len(n, f"|{name}", text=False)
        return _measure(fn(*args, **kwargs), f"|{name}")

    return wrapper


def render_budgeted(template: Any, origin: str, **variables: Any) -> str:
    """Render a compiled template inside a fresh :data:`TEMPLATE_BUDGET`; the output size is capped too."""
    meter = TemplateMeter(TEMPLATE_BUDGET, file=origin)
    token = _current.set(meter)
    try:
        out: list[str] = []
        total = 0
        for chunk in template.generate(**variables):
            total += len(chunk)
            meter.check_len(total, "the rendered prompt", text=True)
            out.append(chunk)
        return "".join(out)
    finally:
        _current.reset(token)


__all__ = ["MAX_SOURCE_CHARS", "TEMPLATE_BUDGET", "BudgetedEnvironment", "TemplateMeter", "TemplateRefused",
           "render_budgeted"]
