"""Score-table export (OpenCompass summarizer shape), compare data, and the CLI's error paths."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.report import (
    changed_rows,
    load_workdir,
    score_deltas,
    score_table,
    to_csv,
    to_markdown,
)

runner = CliRunner()


def _results(wd: Path, model: str) -> dict:
    return {f.stem: json.loads(f.read_text()) for f in (wd / "results" / model).glob("*.json")}


def test_csv_matches_the_results_files(workdir, tmp_path):
    out = tmp_path / "scores.csv"
    res = runner.invoke(app, ["report", str(workdir), "--csv", str(out)])
    assert res.exit_code == 0, res.output
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert rows[0] == ["dataset", "version", "metric", "mode", "served-chat", "served-text"]
    chat, text = _results(workdir, "served-chat"), _results(workdir, "served-text")
    body = {(r[0], r[2]): r for r in rows[1:]}
    for ds in ("science_mc", "arithmetic"):
        r = body[(ds, "accuracy")]
        assert r[3] == "gen"
        assert r[4] == f"{chat[ds]['metrics']['accuracy']:.2f}" and r[5] == f"{text[ds]['metrics']['accuracy']:.2f}"
    # the chat model's ppl task failed: no score, as the summarizer shows it
    assert body[("science_ppl", "accuracy")][3:] == ["ppl", "-", f"{text['science_ppl']['metrics']['accuracy']:.2f}"]
    assert not (workdir / "report-should-not-exist.html").exists()


def test_markdown_to_stdout(workdir):
    res = runner.invoke(app, ["report", str(workdir), "--markdown", "-"])
    assert res.exit_code == 0
    lines = res.stdout.strip().split("\n")
    assert lines[0] == "| dataset | version | metric | mode | served-chat | served-text |"
    assert lines[1] == "|-----|-----|-----|-----|-----|-----|"
    assert len(lines) == 2 + len(score_table(load_workdir(workdir))) - 1


def test_report_default_output_and_size(workdir, tmp_path):
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", str(workdir), "-o", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text()
    assert "http://" not in html.split("<main>")[0].replace("http://www.w3.org", "")  # nothing fetched
    assert "connect-src 'none'" in html


def test_run_writes_the_report_unless_told_not_to(tmp_path):
    from tests.report.conftest import run_workdir

    wd = run_workdir(tmp_path, limit=2, extra_args=("--no-report",))
    assert not (wd / "report.html").exists()


def test_compare_finds_changed_verdicts_and_prompt_diffs(workdir, workdir_b):
    a, b = load_workdir(workdir), load_workdir(workdir_b)
    deltas = {(d["dataset"], d["model"], d["metric"]): d for d in score_deltas(a, b)}
    d = deltas[("science_mc", "served-chat", "accuracy")]
    assert d["delta"] == pytest.approx(d["b"] - d["a"])
    assert deltas[("science_ppl", "served-chat", "-")]["a_status"] == "failed"
    changes = {(c["model"], c["dataset"]): c for c in changed_rows(a, b)}
    sci = changes[("served-chat", "science_mc")]
    rows_a = [json.loads(x) for x in (workdir / "predictions/served-chat/science_mc.jsonl").read_text().splitlines()]
    rows_b = [json.loads(x) for x in (workdir_b / "predictions/served-chat/science_mc.jsonl").read_text().splitlines()]
    flipped = [ra["index"] for ra, rb in zip(rows_a, rows_b, strict=True) if ra["correct"] != rb["correct"]]
    # every row's prompt changed (the template did), so every row is listed; the verdict count is the flips
    assert [c["a"]["index"] for c in sci["changed"]] == [r["index"] for r in rows_a]
    assert [c["a"]["index"] for c in sci["changed"] if "verdict" in c["what"]] == flipped and flipped
    assert sci["counts"]["verdict"] == len(flipped) and sci["counts"]["prompt"] == len(rows_a)
    assert sci["unchanged"] == 0
    diff = sci["changed"][0]["diff"]
    assert ["-", "Answer with the letter of the right option."] in diff and ["+", "Reply with one letter."] in diff


def test_tolerates_extra_and_missing_fields_and_bad_lines(tmp_path):
    wd = tmp_path / "w"
    (wd / "predictions" / "m").mkdir(parents=True)
    (wd / "predictions" / "m" / "d.jsonl").write_text(
        json.dumps({"index": 0, "prompt": "hi", "output": "x", "prediction": "x", "gold": "y", "correct": False,
                    "judge_prompt": "Is x right?", "judge_verdict": "no"}) + "\n"
        + "{not json\n" + json.dumps({"index": 2, "error": "timeout"}) + "\n")
    w = load_workdir(wd)
    assert [t.key for t in w.tasks] == ["m/d"] and w.tasks[0].status == "no results"
    html = runner.invoke(app, ["report", str(wd), "-o", str(tmp_path / "r.html")])
    assert html.exit_code == 0, html.output
    assert "not JSON" in (tmp_path / "r.html").read_text()  # the bad line is reported, not dropped silently


def test_errors_are_typed(tmp_path):
    res = runner.invoke(app, ["report", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "[PW800]" in res.output and "nope" in res.output
    (tmp_path / "empty").mkdir()
    res = runner.invoke(app, ["report", str(tmp_path / "empty")])
    assert res.exit_code == 2 and "no results or predictions" in res.output
    res = runner.invoke(app, ["report", "a", "b", "c"])
    assert res.exit_code == 2 and "1 or 2 paths" in res.output


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=12), st.one_of(st.none(), st.floats(0, 100))),
                min_size=1, max_size=6))
def test_markdown_and_csv_keep_every_cell(cells):
    table = [["dataset", "version", "metric", "mode", "m"]] + [
        [name, "-", "accuracy", "gen", "-" if v is None else f"{v:.2f}"] for name, v in cells]
    assert list(csv.reader(io.StringIO(to_csv(table), newline=""), strict=True)) == table
    md = to_markdown(table).rstrip("\n").split("\n")
    assert len(md) == len(table) + 1  # one line per row, whatever the names hold
    for line, row in zip(md[2:], table[1:], strict=True):
        unescaped = [c.replace("\\|", "|").replace("\\\\", "\\") for c in _split_md(line)]
        assert unescaped[1:] == row[1:]
        assert unescaped[0] == (" ".join(row[0].splitlines()) or " ")


def _split_md(line: str) -> list[str]:
    cells, cur, i = [], "", 2
    body = line[2:-2]
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            cur += body[i:i + 2]
            i += 2
            continue
        if body.startswith(" | ", i):
            cells.append(cur)
            cur, i = "", i + 3
            continue
        cur += body[i]
        i += 1
    return cells + [cur]


def test_csv_keeps_a_carriage_return_in_a_name():
    table = [["dataset", "version", "metric", "mode", "m"], ["a\rb", "-", "accuracy", "gen", "1.00"]]
    assert list(csv.reader(io.StringIO(to_csv(table), newline=""))) == table


def test_a_report_problem_never_fails_the_run(tmp_path, monkeypatch, capsys):
    from rich.console import Console

    from promptweave.report import hook

    def broken(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr("promptweave.report.page.write_report", broken)
    assert hook.report_after_run(tmp_path, Console(), Console(stderr=True)) is None
    assert "no report written (RuntimeError: boom)" in capsys.readouterr().err


_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                        max_size=3), max_leaves=8)


@settings(max_examples=40, deadline=None)
@given(result=st.one_of(st.text(max_size=40), _json_values.map(json.dumps),
                        st.fixed_dictionaries({"metrics": _json_values, "status": _json_values}).map(json.dumps)),
       lines=st.lists(st.one_of(st.text(max_size=30).filter(lambda t: "\n" not in t and "\r" not in t),
                                _json_values.map(json.dumps),
                                st.fixed_dictionaries({"index": _json_values, "prompt": _json_values,
                                                       "correct": _json_values, "gold": _json_values})
                                .map(json.dumps)), max_size=4))
def test_any_work_dir_content_gives_a_report_or_a_typed_error(tmp_path_factory, result, lines):
    wd = tmp_path_factory.mktemp("w")
    (wd / "results" / "m").mkdir(parents=True)
    (wd / "predictions" / "m").mkdir(parents=True)
    (wd / "results" / "m" / "d.json").write_text(result)
    (wd / "predictions" / "m" / "d.jsonl").write_text("".join(line + "\n" for line in lines))
    res = runner.invoke(app, ["report", str(wd), "-o", str(wd / "r.html")])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code in (0, 2)
    if res.exit_code == 0:
        assert (wd / "r.html").stat().st_size > 0
    res = runner.invoke(app, ["report", str(wd), "--csv", "-"])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
