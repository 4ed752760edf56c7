"""Property: whatever a config, template, data file or LVE checker record holds, a command ends in success or
one typed error: never a raw traceback (exit 5, [PW001]) and never a hang.

The mutations are ``benchmarks/fuzz.py``'s, driven here by Hypothesis (which shrinks a failure to a small case);
the benchmark runs thousands of them with a seeded random source.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fuzz


class HypothesisChooser(fuzz.Chooser):
    """The benchmark's chooser with every choice drawn from Hypothesis."""

    def __init__(self, data) -> None:
        self.data = data

    def choice(self, seq):
        return seq[self.data.draw(st.integers(0, len(seq) - 1))]

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))

    def text(self) -> str:
        return self.data.draw(st.one_of(st.sampled_from(fuzz.NASTY_TEXT), st.text(max_size=12)))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(kind=st.sampled_from(sorted(fuzz.KINDS)), data=st.data())
def test_mutated_inputs_give_success_or_a_typed_error(kind, data) -> None:
    folder = Path(tempfile.mkdtemp(prefix="pwfuzz-"))
    try:
        argv = fuzz.command_args(fuzz.KINDS[kind](HypothesisChooser(data), folder), folder)
        outcome, _code, last = fuzz.run_case(argv, limit_s=120.0)  # a hang, not a slow machine: cases take seconds
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert outcome in ("ok", "typed error"), (outcome, argv, last)
    if outcome == "typed error" and last.startswith("error:"):
        assert last.startswith("error: [PW") and "[PW001]" not in last, last
