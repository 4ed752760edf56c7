"""The spread section looks the same inside a run's report as on its own page (table borders, best / worst
colours), variant 0's point sits clear of the y-axis labels, and a tie is neither best nor worst."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.report.page import write_report
from promptweave.report.spread import build_spread_page, spread_section, strip_plot
from promptweave.spread.stats import summarize

GREEN, RED = "rgb(46, 125, 50)", "rgb(198, 40, 40)"


def _fig(scores: list[float | None]) -> dict:
    points = [{"variant": k, "score": s, "description": f"format {k}", "status": "done" if s is not None else "failed"}
              for k, s in enumerate(scores)]
    return {"dataset": "science_mc", "model": "served-chat", "metric": "accuracy", "points": points,
            **summarize(scores)}


def _spread_json(folder: Path, scores: list[float | None]) -> None:
    data = {"config": "cfg.py", "seed": 0, "n": len(scores), "figures": [_fig(scores)], "rankings": []}
    (folder / "spread.json").write_text(json.dumps(data))


def test_seven_of_eight_tied_marks_no_worst() -> None:
    s = summarize([50.0] * 7 + [60.0])
    assert (s["best"], s["worst"]) == (7, None)
    s = summarize([60.0] + [50.0] * 7)
    assert (s["best"], s["worst"]) == (0, None)
    assert (summarize([50.0] * 8)["best"], summarize([50.0] * 8)["worst"]) == (None, None)
    assert (summarize([10.0, None, 20.0])["best"], summarize([10.0, None, 20.0])["worst"]) == (2, 0)
    assert (summarize([10.0])["best"], summarize([10.0])["worst"]) == (None, None)  # one score: no contest


@settings(deadline=None, max_examples=200)
@given(st.lists(st.one_of(st.none(), st.sampled_from([0.0, 25.0, 50.0, 100.0]), st.floats(0, 100)), max_size=12))
def test_best_and_worst_only_when_strictly_unique(scores: list[float | None]) -> None:
    s = summarize(scores)
    got = [(k, x) for k, x in enumerate(scores) if x is not None]
    for key, pick in (("best", max), ("worst", min)):
        if len(got) < 2 or sum(1 for _, x in got if x == pick(x for _, x in got)) > 1:
            assert s[key] is None
        else:
            k = s[key]
            assert all((x < scores[k]) if key == "best" else (x > scores[k]) for j, x in got if j != k)


def test_a_tie_is_not_marked_on_the_page(tmp_path: Path) -> None:
    _spread_json(tmp_path, [50.0] * 7 + [60.0])
    html = spread_section(tmp_path)
    assert "(worst)" not in html and html.count("(best)") == 1
    assert 'fill="#c62828"' not in html and html.count('fill="#2e7d32"') == 1  # no point drawn as the worst


def test_variant_zeros_point_is_clear_of_the_axis_labels() -> None:
    svg = strip_plot(_fig([0.0, 100.0, 50.0]))
    label_x = max(float(x) for x, t in re.findall(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="end">(\d+)</text>', svg))
    circles = [(float(cx), float(r)) for cx, r in re.findall(r'<circle cx="([\d.]+)" cy="[\d.]+" r="([\d.]+)"', svg)]
    assert circles and min(cx - r for cx, r in circles) > label_x + 4, (label_x, circles)  # the labels end at label_x
    # the variant numbers under the points stay under them
    ticks = [float(x) for x in re.findall(r'<text x="([\d.]+)" y="164" text-anchor="middle">', svg)]
    assert ticks == [cx for cx, _ in circles]


def test_the_section_carries_its_own_scoped_style(tmp_path: Path) -> None:
    _spread_json(tmp_path, [10.0, 30.0, 20.0])
    section = spread_section(tmp_path)
    assert section.startswith("<section id='spread' class='pw-spread'><style>")
    rules = re.search(r"<style>(.*?)</style>", section, re.S).group(1)
    selectors = [s.strip() for block in re.findall(r"([^{}]+)\{", rules) for s in block.split(",")]
    assert selectors and all(s.startswith(".pw-spread ") for s in selectors), selectors  # nothing leaks out
    assert "border:1px solid" in rules and "#2e7d32" in rules and "#c62828" in rules
    assert rules in build_spread_page(tmp_path)


def test_in_a_run_report_the_table_has_borders_and_colours(browser, workdir: Path, tmp_path: Path) -> None:
    wd = tmp_path / "work"
    shutil.copytree(workdir, wd)
    _spread_json(wd, [10.0, 30.0, 20.0])
    page = write_report([wd], tmp_path / "report.html")
    for html in (page, tmp_path / "spread.html"):
        if html.name == "spread.html":
            html.write_text(build_spread_page(wd))
        browser.get(html.resolve().as_uri())
        style = browser.execute_script(
            "const td = document.querySelector('#spread table td');"
            "const best = document.querySelector('#spread td.best');"
            "const worst = document.querySelector('#spread td.worst');"
            "const s = getComputedStyle(td);"
            "return [s.borderTopWidth, s.borderTopStyle, getComputedStyle(best).color,"
            "        getComputedStyle(worst).color, best.textContent, worst.textContent];")
        assert style[:4] == ["1px", "solid", GREEN, RED], (html.name, style)
        assert style[4].endswith("(best)") and style[5].endswith("(worst)")


@pytest.mark.parametrize("scores", [[None, None], []])
def test_nothing_scored_draws_no_point_and_marks_nothing(scores, tmp_path: Path) -> None:
    _spread_json(tmp_path, scores)
    html = spread_section(tmp_path)
    assert "<circle" not in html and "(best)" not in html and "(worst)" not in html
