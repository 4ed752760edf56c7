"""``promptweave report A B`` without a browser: the page it writes (by default B/compare.html) holds the score
deltas of the two runs and the rows whose verdict changed, read back from the HTML itself."""
from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from typer.testing import CliRunner

from promptweave.cli.app import app


class _Page(HTMLParser):
    """The delta table's cells and the page's embedded index."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.index = ""
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        ident = dict(attrs).get("id")
        if ident in ("delta-table", "pw-index"):
            self._in.append(ident)
        elif tag == "tr" and "delta-table" in self._in:
            self.rows.append([])
        elif tag == "td" and "delta-table" in self._in and self.rows:
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if (tag == "table" and self._in[-1:] == ["delta-table"]) or (tag == "script" and self._in[-1:] == ["pw-index"]):
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if self._in[-1:] == ["pw-index"]:
            self.index += data
        elif self._in[-1:] == ["delta-table"] and self.rows and self.rows[-1]:
            self.rows[-1][-1] += data.strip()


def _accuracy(workdir: Path) -> float:
    return json.loads((workdir / "results" / "served-chat" / "science_mc.json").read_text())["metrics"]["accuracy"]


def test_report_of_two_work_dirs_compares_them(workdir, workdir_b):
    res = CliRunner().invoke(app, ["report", str(workdir), str(workdir_b)])
    assert res.exit_code == 0, res.output
    out = workdir_b / "compare.html"
    assert out.is_file() and "compare.html" in res.output  # B/compare.html unless -o says otherwise
    page = _Page()
    page.feed(out.read_text(encoding="utf-8"))
    a, b = _accuracy(workdir), _accuracy(workdir_b)
    row = next(r for r in page.rows if r[:3] == ["science_mc", "served-chat", "accuracy"])
    assert row[3:6] == [f"{a:.2f}", f"{b:.2f}", f"{b - a:+.2f}"] and a != b
    index = json.loads(page.index)
    assert index["mode"] == "compare" and len(index["runs"]) == 2
    changed = next(c for c in index["changes"] if (c["model"], c["dataset"]) == ("served-chat", "science_mc"))
    assert changed["counts"]["verdict"] > 0 and changed["n"] == changed["counts"]["prompt"]
