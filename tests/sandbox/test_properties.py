"""Property tests: whatever source the sandbox is given, it answers with a value or a typed error."""
from __future__ import annotations

import ast
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptweave.errors import PromptweaveError
from promptweave.lve.safe_lambda import SafeLambda
from promptweave.sandbox import Budget, Interpreter
from tests.outcome import value_or_error

SMALL = Budget(max_steps=20_000, max_seconds=5.0)

SEEDS = [
    "x = [dict(abbr=f'a{i}', n=i * 2) for i in range(5)]",
    "def f(a, b=2):\n    return a ** b\ny = f(3)",
    "z = '{0}-{k[a]}'.format(1, k={'a': 2}) + '%s' % 3",
    "import os\np = os.path.join('a', 'b')",
    "d = dict(a=1)\nd.update(b=2)\ndel d['a']\nassert d",
    "s = sum([[1], [2]], [])\nt = sorted(s, key=lambda v: -v)",
    "i = 0\nwhile i < 3:\n    i += 1\nelse:\n    j = i",
    "try:\n    {}['k']\nexcept KeyError:\n    k = 1",
]
TOKENS = ["__class__", ".", "(", ")", "[", "]", "{", "}", "**", "*", "%", "'", "0", "9", "x", ":", "\n", " ",
          "format", "lambda", "for", "in", "range(10**9)", "os", "import ", ",", "=", "+", "<<", "!r", "{0.", "-"]


def _run(source: str) -> None:
    """The config loader's public path: a value, or one of promptweave's typed errors (the code's own
    ``KeyError`` / ``assert`` / ... included, as a ``ConfigError``); any other exception fails the test."""
    from promptweave.config import load_config

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.py"
        path.write_text(source, encoding="utf-8")
        _, exc = value_or_error(load_config, path)
    assert exc is None or _typed(exc), exc


def _typed(exc: PromptweaveError) -> bool:
    """A typed error: a promptweave class with its own code, rendered as one ``error: [PWnnn]`` line."""
    return type(exc) is not PromptweaveError and exc.code.startswith("PW") and exc.code != "PW001"


@st.composite
def mutated(draw):
    source = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(0, 4))):
        pos = draw(st.integers(0, len(source)))
        if draw(st.booleans()):
            source = source[:pos] + draw(st.sampled_from(TOKENS)) + source[pos:]
        else:
            source = source[:pos] + source[pos + draw(st.integers(1, 4)):]
    return source


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_config_sources_give_a_value_or_a_typed_error(source):
    _run(source)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_random_text_gives_a_value_or_a_typed_error(source):
    _run(source)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(TOKENS + ["r", "a", "1"]), max_size=12).map("".join))
def test_checker_lambdas_compile_and_run_or_give_a_typed_error(body):
    fn, exc = value_or_error(SafeLambda.compile, "lambda r: " + body, max_steps=20_000)
    if exc is None:
        # besides a typed error, the lambda's own error as Python's lambda raises it: LVE's runner records it as
        # the checker's error (lve/runner.py); an interpreter fault (AttributeError, AssertionError,
        # RecursionError...) propagates and fails the test
        _, exc = value_or_error(fn, "x", expected=(PromptweaveError, ArithmeticError, LookupError, TypeError,
                                                   ValueError, NameError))
    assert exc is None or not isinstance(exc, PromptweaveError) or _typed(exc), exc


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.lists(st.integers(-5, 5) | st.text(max_size=5), max_size=3))
def test_format_strings_on_plain_data_match_python_or_are_refused(template, args):
    interp = Interpreter("<hypothesis>", budget=SMALL)
    try:
        expected = template.format(*args)
    except Exception:  # noqa: BLE001 - Python itself refuses it; ours must too
        expected = None
    try:
        got = interp.eval_expression(ast.parse("t.format(*a)", mode="eval").body, {"t": template, "a": args})
    except PromptweaveError:
        return  # refused: a field read an attribute or a width was past the budget
    except Exception:  # noqa: BLE001
        assert expected is None
        return
    assert got == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from(list("[]{}:,-&*ab1 \n\"'!|>%")), max_size=60),
       suffix=st.sampled_from([".yaml", ".json", ".py"]))
def test_config_files_of_any_text_load_or_fail_typed(tmp_path, text, suffix):
    from promptweave.config import load_config

    p = tmp_path / f"c{suffix}"
    p.write_text(text, encoding="utf-8")
    _, exc = value_or_error(load_config, p)
    assert exc is None or _typed(exc), exc
