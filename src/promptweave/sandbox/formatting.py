"""``str.format``, ``format_map``, ``format()`` and ``%`` for sandboxed code, without attribute walks.

Python's own ``str.format`` resolves ``{0.attr}`` fields with ``getattr``, which turns any object
into a path to modules, files and code. Here a field is a plain name or index followed only by
``[key]`` / ``[index]`` lookups on plain data; ``.attr`` is refused. Widths and precisions are
checked against the string budget before anything is built.
"""
from __future__ import annotations

import _string  # the C helper str.format itself uses to split field names
import re
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from promptweave.errors import SandboxError
from promptweave.sandbox.budget import Meter

PLAIN_SCALARS = (str, int, float, bool, type(None), complex, bytes)
PLAIN_CONTAINERS = (list, tuple, dict, set, frozenset)
_FORMATTER = string.Formatter()
_NUMBER = re.compile(r"\d+")
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?(.)", re.DOTALL)

Refuse = Callable[[str], SandboxError]


def check_spec(meter: Meter, spec: str) -> None:
    """Refuse a format spec whose width or precision would build a string past the budget."""
    for number in _NUMBER.findall(spec):
        if len(number) > 9 or int(number) > meter.budget.max_str_len:
            raise meter.refuse(f"format spec {spec!r} asks for a field of {number} characters",
                               f"max_str_len={meter.budget.max_str_len}")


def format_value(meter: Meter, value: Any, spec: str, conversion: str | None = None) -> str:
    """``format(value, spec)`` after ``!r``/``!s``/``!a``; objects that are not plain data are
    formatted by their (inert) ``str``."""
    if conversion == "r":
        value = repr(value)
    elif conversion == "s":
        value = str(value)
    elif conversion == "a":
        value = ascii(value)
    elif conversion is not None:
        raise ValueError(f"Unknown conversion specifier {conversion}")
    check_spec(meter, spec)
    if not isinstance(value, PLAIN_SCALARS + PLAIN_CONTAINERS):
        value = str(value)
    out = format(value, spec)
    meter.alloc(len(out))
    return out


def safe_format(meter: Meter, refuse: Refuse, template: str, args: Sequence[Any], kwargs: Mapping[str, Any],
                _depth: int = 0, _auto: list[int] | None = None) -> str:
    """``template.format(*args, **kwargs)`` with fields limited to names and ``[key]`` lookups."""
    if _depth > 2:
        raise ValueError("Max string recursion exceeded")
    auto = _auto if _auto is not None else [0]
    out: list[str] = []
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        out.append(literal)
        if field is None:
            continue
        first, rest = _string.formatter_field_name_split(field)
        if first == "":
            first = auto[0]
            auto[0] += 1
        if isinstance(first, int):
            value = args[first]
        else:
            value = kwargs[first]
        for is_attr, key in rest:
            if is_attr:
                raise refuse(f"format field {{{field}}} reads attribute '.{key}'; format strings in safe mode "
                             "may only use names and [key] / [index] lookups on plain data")
            if not isinstance(value, PLAIN_CONTAINERS + (str,)):
                raise refuse(f"format field {{{field}}} indexes a {type(value).__name__}; only plain data can "
                             "be indexed in format strings")
            value = value[key]
        spec = safe_format(meter, refuse, spec, args, kwargs, _depth + 1, auto) if spec else ""
        out.append(format_value(meter, value, spec, conversion))
    result = "".join(out)
    meter.check_len(len(result), "str.format", text=True)
    return result


def _plain(value: Any, depth: int = 0) -> bool:
    if isinstance(value, PLAIN_SCALARS):
        return True
    if depth < 20 and isinstance(value, (list, tuple, set, frozenset)):
        return all(_plain(v, depth + 1) for v in value)
    if depth < 20 and isinstance(value, dict):
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in value.items())
    return False


def safe_percent(meter: Meter, refuse: Refuse, template: str | bytes, values: Any) -> Any:
    """``template % values`` with widths checked first and only plain data as values."""
    text = template.decode("latin-1") if isinstance(template, bytes) else template
    star = False
    for width, precision, _conv in _PERCENT_SPEC.findall(text):
        for number in (width, precision):
            if number == "*":
                star = True
            elif number:
                check_spec(meter, number)
    if star:
        for v in values if isinstance(values, tuple) else (values,):
            if isinstance(v, int) and not isinstance(v, bool):
                check_spec(meter, str(abs(v)))
    if not _plain(values) and not isinstance(values, Mapping):
        raise refuse(f"'%' formatting of a {type(values).__name__}; only plain data can be %-formatted in safe mode")
    if isinstance(values, Mapping) and not _plain(dict(values)):
        raise refuse("'%' formatting with a mapping holding objects that are not plain data")
    result = template % values
    meter.check_len(len(result), "'%' formatting", text=True)
    meter.alloc(len(result))
    return result
