"""The restricted evaluator for checker lambdas."""
from __future__ import annotations

import pytest

from promptweave.lve.safe_lambda import (
    ExpressionLimitError,
    SafeLambda,
    UnsafeExpressionError,
)


@pytest.mark.parametrize("source,args,kwargs,expected", [
    ("lambda r, a, b: int(r) == int(a) + int(b)", ("5",), {"a": 2, "b": 3}, True),
    ("lambda r, a, b: str(int(a) + int(b)) in r", ("it is 48",), {"a": "23", "b": "25"}, True),
    ("lambda rs, a, b: all(int(r) == int(a) + int(b) for r in rs)", (["4", "4"],), {"a": "3", "b": "1"}, True),
    ("lambda r, location: not any([l.lower() in r.lower() for l in location])", ("Zurich",), {"location": ["zurich"]}, False),
    ("lambda r, value: r == 'ERROR' or re.match(r'(\\d{4})-(\\d{2})', r.strip()) is not None", (" 2024-01 ",), {"value": 0}, True),
    ("lambda r: f'buf == NULL' in r or f'{len(r)}' == '3'", ("abc",), {}, True),
    ("lambda r: sorted(r.split(), key=lambda w: -len(w))[0]", ("a bbb cc",), {}, "bbb"),
    ("lambda r: {k: v for k, v in zip('ab', [1, 2])}", ("",), {}, {"a": 1, "b": 2}),
    ("lambda r: json.loads(r)['k'] == 'v1'", ('{"k": "v1"}',), {}, True),
    ("lambda r, *rest, **kw: (len(rest), sorted(kw))", (1, 2, 3), {"z": 1}, (2, ["z"])),
    ("lambda r, x=5: r + x", (1,), {}, 6),
    ("lambda r: '%5s|%d' % (r, 7)", ("ab",), {}, "   ab|7"),
    ("lambda r: isinstance(r, (int, float)) and pow(r, 2) == 9", (3,), {}, True),
    ("lambda r: '{0} and {k[a]}'.format(r, k={'a': 1})", ("x",), {}, "x and 1"),
    ("lambda r: math.sqrt(r) == 3", (9,), {}, True),
])
def test_ordinary_checker_lambdas_work(source, args, kwargs, expected):
    assert SafeLambda.compile(source)(*args, **kwargs) == expected


def test_generator_short_circuits_like_python():
    fn = SafeLambda.compile("lambda rs: all(int(r) > 0 for r in rs)")
    assert fn(["0", "not a number"]) is False  # stops before int("not a number")


def test_unknown_names_are_refused_before_running():
    with pytest.raises(UnsafeExpressionError, match="foo"):
        SafeLambda.compile("lambda r, a: [x for x in a if foo(x)]")
    SafeLambda.compile("lambda r, a: [x for x in a for y in x if y] + list(map(lambda z: z, a))")


@pytest.mark.parametrize("source", [
    "lambda r: __import__('os').system('echo hi')",
    "lambda r: ().__class__.__bases__[0].__subclasses__()",
    "lambda r: r.__class__",
    "lambda r: getattr(r, '__class__')",
    "lambda r: open('/etc/passwd').read()",
    "lambda r: eval('1')",
    "lambda r: '{0.__class__}'.format(r)",
    "lambda r: re.__dict__",
    "lambda r: type(r)",
    "lambda r: globals()",
    "lambda r: [x for x in ().__class__.__mro__]",
])
def test_escapes_are_refused(source):
    with pytest.raises(UnsafeExpressionError):
        SafeLambda.compile(source)("x")


@pytest.mark.parametrize("source", ["import os", "x = 1", "1 + 1", "def f(): pass", "lambda r: (x := 1)",
                                    "lambda r: foo(r)", "lambda r: [y for x in r]", "lambda r: re.system",
                                    "lambda r: r.format_map.x", "lambda r: os.getenv('HOME')"])
def test_only_a_single_lambda_expression_is_accepted(source):
    with pytest.raises(UnsafeExpressionError):
        SafeLambda.compile(source)


@pytest.mark.parametrize("source", [
    "lambda r: sum(i for i in range(10**7))",
    "lambda r: [j for i in range(5000) for j in range(5000)]",
    "lambda r: 'a' * 10**9",
    "lambda r: [0] * 10**9",
    "lambda r: 10**10**10",
    "lambda r: pow(10, 10**10)",
    "lambda r: 1 << 10**9",
    "lambda r: ('x' * 1000).replace('', 'y' * 100000)",
    "lambda r: f'{r:>100000000000}'",
    "lambda r: range(10**12)",
    "lambda r: '%999999999s' % r",
])
def test_long_running_or_huge_expressions_are_stopped(source):
    fn = SafeLambda.compile(source, max_steps=200_000)
    with pytest.raises(ExpressionLimitError):
        fn("r")


def test_step_budget_is_per_call():
    fn = SafeLambda.compile("lambda r: sum(range(r))", max_steps=1000)
    assert fn(10) == 45
    assert fn(10) == 45  # a second call starts a fresh budget


def test_signature_introspection_and_binding():
    fn = SafeLambda.compile("lambda r, a, b=1: r")
    assert fn.positional_params == ["r", "a", "b"] and fn.required_after_first() == ["a"]
    fn.check_call(1, ["a", "b"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        fn.check_call(1, ["a", "c"])
    with pytest.raises(TypeError, match="missing required argument: 'a'"):
        fn("r")
