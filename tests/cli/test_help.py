"""Every command's ``--help`` is plain text a user reads: no ``<bool>`` after flags, no RST or Rich markup, and a
description for every argument and option."""
from __future__ import annotations

import re

import click
import pytest
import typer

from promptweave.cli.app import app, run_cli


def _commands() -> list[tuple[list[str], click.Command]]:
    root = typer.main.get_command(app)
    out: list[tuple[list[str], click.Command]] = [([], root)]
    todo = [([], root)]
    while todo:
        path, cmd = todo.pop()
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            out.append(([*path, name], sub))
            todo.append(([*path, name], sub))
    return out


COMMANDS = _commands()


def test_every_command_is_covered() -> None:
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"run", "view", "lint", "report", "conformance", "lve run"} <= names


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=[" ".join(p) or "promptweave" for p, _ in COMMANDS])
def test_help_is_plain_and_describes_every_flag(capsys, monkeypatch, path, cmd) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code = run_cli([*path, "--help"])
    text = capsys.readouterr().out
    assert code == 0 and "Usage:" in text
    assert "<bool>" not in text
    assert "``" not in text and ":func:" not in text and ":class:" not in text  # no RST
    assert not re.search(r"\[/?(bold|red|yellow|green|dim)\]", text)  # no Rich markup
    for param in cmd.params:
        if isinstance(param, click.Option) and param.hidden:
            continue
        helptext = (getattr(param, "help", None) or "").strip()
        assert helptext, f"{' '.join(path)}: {param.name} has no description"
        assert "\n" not in helptext.split(". ")[0], f"{param.name}: the first sentence spans lines"
        for opt in getattr(param, "opts", []):
            if opt.startswith("-"):
                assert opt in text


def test_extras_are_named_as_written(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    run_cli(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "promptweave[ray]" in text
