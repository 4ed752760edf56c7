"""tools/lint_tests.py finds each kind of test that cannot fail, and passes the honest forms of the same tests."""
from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("lint_tests", ROOT / "tools" / "lint_tests.py")
lint_tests = importlib.util.module_from_spec(_spec)
sys.modules["lint_tests"] = lint_tests  # dataclasses look the module up while the class is made
_spec.loader.exec_module(lint_tests)

BAD = '''
import pytest

def helper_that_checks(x):
    assert x

def test_nothing_checked():
    sum([1, 2])

def test_swallows():
    try:
        int("x")
    except ValueError:
        pass
    assert True

def test_or_after_a_longer_find(text="math_verify"):
    assert "math_verify" in text
    assert "x" in text or "math" in text

def test_or_beside_its_own_prefix(rows=("ab",), shared="a"):
    assert all(r == shared + "b" or r.startswith(shared) for r in rows)
'''

GOOD = '''
import pytest

def helper_that_checks(x):
    assert x

def test_through_a_helper():
    helper_that_checks(1)

def test_raises():
    with pytest.raises(ValueError, match="invalid"):
        int("x")

def test_a_case_left_out_is_explicit():
    for s in ("1", "x"):
        try:
            n = int(s)
        except ValueError:
            continue
        assert n == 1

def test_a_real_or(text="ab"):
    assert "a" in text or "z" in text
'''


def _lint(tmp_path: Path, source: str) -> list[str]:
    f = tmp_path / "test_sample.py"
    f.write_text(textwrap.dedent(source), encoding="utf-8")
    return [f"{x.line}: {x.what}" for x in lint_tests.lint([f])]


def test_each_kind_of_unfailing_test_is_found(tmp_path):
    found = _lint(tmp_path, BAD)
    assert any("test_nothing_checked asserts nothing" in f for f in found)
    assert any("test_swallows: this except swallows" in f for f in found)
    assert any("'math' is inside 'math_verify'" in f for f in found)
    assert any("a sibling `==` already starts with the prefix" in f for f in found)
    assert len(found) == 4, found


def test_honest_tests_pass(tmp_path):
    assert _lint(tmp_path, GOOD) == []


def test_the_suite_itself_is_clean():
    assert [str(f) for f in lint_tests.lint([ROOT / "tests"])] == []
