"""The shared LVE conformance corpora (``../shared/conformance`` beside the checkout) pass through the public
path; the ``shared_corpus`` fixture skips, with its allow-listed reason, where they are absent."""
from __future__ import annotations

from pathlib import Path

from promptweave.conformance.runner import run_files


def test_lve_corpora_pass(shared_corpus: Path):
    files = sorted(shared_corpus.glob("lve-*.jsonl.gz"))
    assert files, f"no lve-*.jsonl.gz in {shared_corpus}"
    report = run_files(files)
    assert report.failed == 0, [f.case_id + ": " + f.detail for f in report.failures]
    assert report.unsupported == 0
    assert report.passed >= 100
