"""The shared LVE conformance corpora pass through the public path (skipped where absent)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from promptweave.conformance.runner import run_files

CORPUS = Path(os.environ.get("PROMPTWEAVE_CONFORMANCE") or Path(__file__).resolve().parents[3] / "shared" / "conformance")
FILES = sorted(CORPUS.glob("lve-*.jsonl.gz")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not FILES, reason="conformance corpora not present on this machine")
def test_lve_corpora_pass():
    report = run_files(FILES)
    assert report.failed == 0, [f.case_id + ": " + f.detail for f in report.failures]
    assert report.unsupported == 0
    assert report.passed >= 100
