"""The perf page: charts and table from a work dir's perf index, every value escaped, odd lines skipped."""
from __future__ import annotations

import json

from promptweave.report.perf_page import perf_section, write_perf_page


def _line(model: str, dataset: str, conc, ttft: float) -> dict:
    stats = {m: {"Median": ttft, "P99": ttft * 2} for m in ("TTFT", "TPOT", "ITL", "E2EL")}
    return {"model": model, "dataset": dataset, "concurrency": conc,
            "total": {"Total Requests": 4, "Failed Requests": 0, "Concurrency": 1.0, "Request Throughput": 2.0,
                      "Output Token Throughput": 80.0, "stats": stats}, "stable": None}


def test_values_from_the_work_dir_are_escaped_and_bad_lines_skipped(tmp_path):
    folder = tmp_path / "performances"
    folder.mkdir()
    evil = "<script>alert(1)</script>"
    lines = [_line(evil, "d&<b>", 1, 0.1), _line(evil, "d&<b>", "16<i>", 0.2), {"total": "not a dict"}]
    (folder / "perf_index.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n{broken\n")
    html = perf_section(tmp_path)
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>" not in html and "<i>" not in html
    assert html.count("<svg") == 6 and html.count("<tr>") == 3  # header + two levels
    page = write_perf_page(tmp_path).read_text()
    assert page.startswith("<!doctype html>") and "<script>" not in page


def test_a_work_dir_without_perf_results_has_no_section(tmp_path):
    assert perf_section(tmp_path) == ""
    assert "No perf results" in write_perf_page(tmp_path).read_text()
