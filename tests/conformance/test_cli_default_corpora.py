"""``promptweave conformance`` with no arguments runs every corpus in ``$PROMPTWEAVE_CONFORMANCE`` (CI's place for
them), and its verdict is that folder's."""
from __future__ import annotations

from typer.testing import CliRunner

from promptweave.cli.app import app
from tests.conformance.test_corpus import _case, _write

runner = CliRunner()


def test_no_arguments_reads_the_folder_named_by_the_environment(tmp_path, monkeypatch):
    good, mixed = tmp_path / "good", tmp_path / "mixed"
    good.mkdir()
    mixed.mkdir()
    _write(good, [_case("Q: hi"), _case("Q: hi")])
    _write(mixed, [_case("Q: hi"), _case("Q: bye")])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROMPTWEAVE_CONFORMANCE", str(good))
    res = runner.invoke(app, ["conformance"])
    assert res.exit_code == 0, res.output
    assert res.output.rstrip().endswith("2 passed, 0 failed")
    monkeypatch.setenv("PROMPTWEAVE_CONFORMANCE", str(mixed))
    res = runner.invoke(app, ["conformance"])
    assert res.exit_code == 1
    assert res.output.rstrip().endswith("1 passed, 1 failed") and "-Q: bye" in res.output
