"""Work dirs handed to ``report`` are data: planted links are never written through nor read out of the dir,
no value of ``spread.json`` renders as markup, and every hostile shape or value ends in a page or a typed error.

Commands run through ``run_cli`` (the real entry point); pages are checked by parsing their HTML.
"""
from __future__ import annotations

import json
import shutil
import sqlite3
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptweave.cli.app import run_cli

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz  # noqa: E402

MARK = fuzz.OUTSIDE_MARK
REFRESH = "<meta http-equiv=refresh content='0;url=https://example.invalid'>"
FAKE = "<a href='https://example.invalid/fake'>fake</a><div id='fake-el'>x</div>"


class _Elements(HTMLParser):
    """Every element of a page as (tag, attributes); script and style contents are not markup."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    p = _Elements()
    p.feed(html)
    p.close()
    return p.found


def injected(html: str) -> list[tuple[str, dict]]:
    """Elements no report page has of its own: a refresh, links or elements from the planted values."""
    bad = []
    for tag, attrs in elements(html):
        if tag == "meta" and (attrs.get("http-equiv") or "").lower() == "refresh":
            bad.append((tag, attrs))
        elif tag == "a" and "example.invalid" in (attrs.get("href") or "") or tag == "a" and attrs.get("href") == "x":
            bad.append((tag, attrs))
        elif attrs.get("id") == "fake-el" or "onload" in attrs or tag in ("i", "iframe", "form"):
            bad.append((tag, attrs))
    return bad


def _cli(capsys, *argv) -> tuple[int, str]:
    code = run_cli([str(a) for a in argv])
    out = capsys.readouterr()
    text = out.out + out.err
    assert "[PW001]" not in text and "Traceback" not in text, text
    return code, text


def _run_dir(base: Path, *, tokens=None, usage=None) -> Path:
    work = base / "w"
    (work / "results" / "m").mkdir(parents=True)
    (work / "predictions" / "m").mkdir(parents=True)
    result = {"model": "m", "dataset": "d", "mode": "gen", "status": "done", "rows": 1, "metrics": {"accuracy": 50.0}}
    if tokens is not None:
        result["tokens"] = tokens
    (work / "results" / "m" / "d.json").write_text(json.dumps(result))
    row = {"index": 0, "prompt": "inside-row", "prediction": "A", "gold": "A", "correct": True}
    if usage is not None:
        row["usage"] = usage
    (work / "predictions" / "m" / "d.jsonl").write_text(json.dumps(row) + "\n")
    return work


def _hostile_spread(value) -> dict:
    point = {"variant": value, "score": 50.0, "description": value, "status": value}
    return {"config": value, "seed": value, "n": value,
            "figures": [{"dataset": value, "model": value, "metric": value, "points": [point, dict(point, variant=1)],
                         "min": value, "max": value, "spread": value, "mean": value, "std": value,
                         "ci95": [value, value], "pss": value, "best": value, "worst": value}],
            "rankings": [{"dataset": value, "top_changes": value,
                          "per_variant": [{"variant": value, "ranking": [value, value]}]}],
            "search": [{"dataset": value, "model": value, "best": value, "worst": value, "calls_used": value,
                        "budget": value, "stopped": value, "best_interval": [value, value],
                        "worst_interval": [value, value]}]}


# ---------------------------------------------------------------------- values reaching the page are escaped
@pytest.mark.parametrize("with_run", [False, True], ids=["spread page", "run report with spread section"])
@pytest.mark.parametrize("value", [REFRESH, FAKE, "'><i>x</i>", '"><i>x</i>', {"k": REFRESH}, [FAKE]])
def test_no_spread_value_renders_as_markup(tmp_path, capsys, with_run, value) -> None:
    work = _run_dir(tmp_path) if with_run else tmp_path / "w"
    work.mkdir(exist_ok=True)
    (work / "spread.json").write_text(json.dumps(_hostile_spread(value)))
    code, text = _cli(capsys, "report", work)
    assert code == 0, text
    html = (work / "report.html").read_text()
    assert injected(html) == []
    # the values are there, as text
    assert "example.invalid" in html or "&lt;i&gt;" in html or "&#x27;&gt;&lt;i&gt;" in html


def test_a_planted_refresh_is_really_detected(tmp_path) -> None:
    """The check above finds what it looks for in a page that does hold it."""
    assert injected(f"<html><head>{REFRESH}</head><body>{FAKE}</body></html>") != []


# ---------------------------------------------------------------------- hostile shapes: page or typed error
@pytest.mark.parametrize("text", ["[1, 2]", "[" * 100_000 + "]" * 100_000, "{}", '{"figures": 3}', "null",
                                  '{"figures": [{"points": [{"variant": "x"}]}]}', '"text"', "not json"])
def test_odd_spread_shapes_give_a_typed_error_or_a_page(tmp_path, capsys, text) -> None:
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "spread.json").write_text(text)
    code, out = _cli(capsys, "report", alone)
    assert code == 0 or "[PW821]" in out, out
    with_run = _run_dir(tmp_path / "run")
    (with_run / "spread.json").write_text(text)
    code, out = _cli(capsys, "report", with_run)
    assert code == 0, out  # the run's report, the spread section saying what is wrong with the file
    assert injected((with_run / "report.html").read_text()) == []


@pytest.mark.parametrize("tokens,usage", [({"prompt": 10, "output": "lots"}, None),
                                          ({"prompt": float("inf"), "output": 1}, None),
                                          ({"prompt": 10**400, "output": 1}, None),
                                          (None, {"prompt_tokens": float("inf"), "completion_tokens": "x"}),
                                          (None, {"prompt_tokens": float("nan"), "completion_tokens": 10**400})])
def test_odd_token_counts_are_shown_not_crashed_on(tmp_path, capsys, tokens, usage) -> None:
    work = _run_dir(tmp_path, tokens=tokens, usage=usage)
    code, out = _cli(capsys, "report", work)
    assert code == 0, out
    assert "inside-row" in fuzz_page_text(work / "report.html")


def fuzz_page_text(page: Path) -> str:
    import base64
    import gzip
    import re

    html = page.read_text()
    parts = [html]
    for blob in re.findall(r'type="application/octet-stream"[^>]*>([A-Za-z0-9+/=]+)<', html):
        parts.append(gzip.decompress(base64.b64decode(blob)).decode("utf-8"))
    return "\n".join(parts)


@pytest.mark.parametrize("created", [1e300, -1e300, "yesterday", None, b"\x00"])
def test_odd_cache_times_and_rows_leave_the_facts_out(tmp_path, capsys, created) -> None:
    work = _run_dir(tmp_path)
    con = sqlite3.connect(work / "cache.sqlite")
    con.execute("CREATE TABLE responses (key TEXT, model TEXT, kind TEXT, request TEXT, response TEXT, created)")
    con.execute("INSERT INTO responses VALUES ('k', 'm', 'gen', '{}', ?, ?)",
                ('{"usage": {"prompt_tokens": 1e999, "cost": "much"}}', created))
    con.execute("INSERT INTO responses VALUES ('k2', 'm', 'gen', '{}', x'00ff', 5)")
    con.commit()
    con.close()
    code, out = _cli(capsys, "report", work)
    assert code == 0, out
    html = (work / "report.html").read_text()
    assert "cached calls" in html


def test_a_foreign_or_broken_cache_is_a_problem_line(tmp_path, capsys) -> None:
    work = _run_dir(tmp_path)
    (work / "cache.sqlite").write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    code, out = _cli(capsys, "report", work)
    assert code == 0, out
    assert "cache.sqlite: unreadable" in (work / "report.html").read_text()


# ---------------------------------------------------------------------- planted links: never written through
def _outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / "variant" / "results" / "m").mkdir(parents=True)
    for name in ("target.html", "run.json", "result.json", "variant/report.html"):
        (out / name).write_text(MARK)
    (out / "variant" / "results" / "m" / "d.json").write_text(json.dumps({"model": "m", "dataset": "d"}))
    return out


@pytest.mark.parametrize("name", ["report.html.tmp", "report.html"])
def test_a_planted_page_link_is_replaced_not_followed(tmp_path, capsys, name) -> None:
    out = _outside(tmp_path)
    work = _run_dir(tmp_path)
    (work / name).symlink_to(out / "target.html")
    code, text = _cli(capsys, "report", work)
    assert code == 0, text
    assert (out / "target.html").read_text() == MARK
    page = work / "report.html"
    assert page.is_file() and not page.is_symlink() and "inside-row" in fuzz_page_text(page)


def test_a_variant_folder_linked_elsewhere_is_refused(tmp_path, capsys) -> None:
    out = _outside(tmp_path)
    work = tmp_path / "w"
    (work / "variants").mkdir(parents=True)
    (work / "variants" / "1").symlink_to(out / "variant")
    (work / "spread.json").write_text(json.dumps(_hostile_spread(1)))
    code, text = _cli(capsys, "report", work)
    assert code != 0 and "[PW721]" in text and "variants/1" in text, text
    assert (out / "variant" / "report.html").read_text() == MARK
    assert sorted(p.name for p in (out / "variant").iterdir()) == ["report.html", "results"]


def test_links_out_of_the_work_dir_are_not_read(tmp_path, capsys) -> None:
    out = _outside(tmp_path)
    (out / "run.json").write_text(json.dumps({"secret": "OUTSIDE-RUN-JSON"}))
    (out / "result.json").write_text(json.dumps({"model": "OUTSIDE-RESULT", "dataset": "z",
                                                 "metrics": {"accuracy": 1}}))
    work = _run_dir(tmp_path)
    (work / "run.json").symlink_to(out / "run.json")
    (work / "results" / "m" / "z.json").symlink_to(out / "result.json")
    (work / "spread.json").symlink_to(out / "run.json")
    code, text = _cli(capsys, "report", work)
    assert code == 0, text
    html = fuzz_page_text(work / "report.html")
    assert "OUTSIDE-RUN-JSON" not in html and "OUTSIDE-RESULT" not in html
    assert "outside the work dir" in html


def test_a_fifo_in_the_work_dir_is_not_opened(tmp_path, capsys) -> None:
    import os

    work = _run_dir(tmp_path)
    os.mkfifo(work / "run.json")
    os.mkfifo(work / "results" / "m" / "fifo.json")
    code, text = _cli(capsys, "report", work)  # would block for good if either were opened for reading
    assert code == 0, text
    assert "not a regular file" in (work / "report.html").read_text()


# ---------------------------------------------------------------------- Hypothesis over hostile work dirs
class _Chooser(fuzz.Chooser):
    def __init__(self, data) -> None:
        self.data = data

    def choice(self, seq):
        return seq[self.data.draw(st.integers(0, len(seq) - 1))]

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))

    def text(self) -> str:
        return self.data.draw(st.one_of(st.sampled_from(fuzz.NASTY_TEXT + fuzz.SPREAD_MARKUP), st.text(max_size=12)))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_hostile_work_dirs_and_caches(data) -> None:
    folder = Path(tempfile.mkdtemp(prefix="pwfuzz-"))
    try:
        argv = fuzz.command_args(fuzz.workdir_case(_Chooser(data), folder), folder)
        outcome, _code, last = fuzz.run_case(argv, limit_s=60.0)
        touched = fuzz.outside_touched(folder)
        pages = [p for p in (folder / "w").rglob("report.html") if p.is_file() and not p.is_symlink()]
        markup = [injected(p.read_text(errors="replace")) for p in pages]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert outcome in ("ok", "typed error"), (outcome, argv, last)
    assert "[PW001]" not in last, last
    assert touched == [], touched
    assert all(m == [] for m in markup), markup
