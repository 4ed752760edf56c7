"""AISBench eval configs (its docs' form: read_base of a shipped dataset config + its vllm_api service model) give
AISBench's scores from the same request bodies.

What AISBench 3.1 itself sent and scored on each case was recorded from its own CLI, run with its dependencies
(``python -m tests.e2e.aisbench_parity``), in ``fixtures/aisbench_parity.json``; promptweave is checked against
that record here. Where the reference venv is present, the record itself is re-checked against a fresh
AISBench run, and promptweave is run again inside that venv (AISBench installed with its dependencies: what
AISBench's users have), where it must send and score the same.
"""
from __future__ import annotations

from collections import Counter

import pytest

from tests.e2e.aisbench_parity import (
    BY_NAME,
    load_fixture,
    reference_venv,
    run_promptweave,
    run_promptweave_in,
    run_reference,
    venv_runs_promptweave,
)

_VENV_HOW = ("re-checking the AISBench record needs AISBench installed with its dependencies in a venv named by "
             "$PROMPTWEAVE_AIS_FULL_VENV (a minute a config; tools/build_reference_venvs.sh builds it); the "
             "comparison with the record ran")

RECORDED = load_fixture()
CASES = sorted(RECORDED)


def _close(ours: dict, theirs: dict) -> list[str]:
    bad = []
    for abbr, metrics in theirs.items():
        got = (ours or {}).get(abbr) or {}
        for k, v in metrics.items():
            if k not in got or abs(float(got[k]) - float(v)) > 1e-6:
                bad.append(f"{abbr}.{k}: promptweave {got.get(k)} vs AISBench {v}")
    return bad


def test_every_case_is_recorded():
    assert set(RECORDED) == set(BY_NAME), "re-record the missing cases: python -m tests.e2e.aisbench_parity"


@pytest.mark.parametrize("name", CASES)
def test_promptweave_sends_and_scores_as_aisbench(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    got = run_promptweave(BY_NAME[name], tmp_path)
    assert got["exit_code"] == 0, got["output"]
    want = RECORDED[name]
    assert Counter(got["requests"]) == Counter(want["requests"]), "request bodies differ from AISBench's"
    assert not _close(got["scores"], want["scores"])


@pytest.mark.skipif(reference_venv() is None, reason=_VENV_HOW)
@pytest.mark.parametrize("name", CASES)
def test_the_record_is_what_aisbench_does(name, tmp_path):
    got = run_reference(BY_NAME[name], tmp_path, reference_venv())
    assert got["exit_code"] == 0, got["output"]
    want = RECORDED[name]
    assert Counter(got["requests"]) == Counter(want["requests"])
    assert not _close(got["scores"], want["scores"])


@pytest.mark.skipif(reference_venv() is None, reason=_VENV_HOW)
@pytest.mark.parametrize("name", CASES)
def test_promptweave_in_the_aisbench_environment_sends_and_scores_as_aisbench(name, tmp_path):
    venv = reference_venv()
    missing = venv_runs_promptweave(venv)
    if missing:
        pytest.skip(f"promptweave's dependencies are missing in {venv} ({missing}): "
                    f"{venv}/bin/pip install --no-deps -e . and its runtime dependencies (numpy stays <2)")
    got = run_promptweave_in(BY_NAME[name], tmp_path, venv)
    assert got["exit_code"] == 0, got["output"]
    want = RECORDED[name]
    assert Counter(got["requests"]) == Counter(want["requests"]), "request bodies differ from AISBench's"
    assert not _close(got["scores"], want["scores"])
