"""The README and the docs site stay a front door and a reference: short pages, every error code documented, no
development-log prose, and a tour whose commands run from a fresh checkout."""
from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# text other branches hand in for the lead to fold into pages; never part of the site
PAGES = sorted(p for p in DOCS.rglob("*.md") if "incoming" not in p.relative_to(DOCS).parts)
DEV_LOG = re.compile(r"after the merges|Before this work|Rerun on|this session|the issue|issue [0-9]")
CODE = re.compile(r"PW\d{3}")


def test_readme_fits_on_a_few_screens():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines; move reference text to a page under docs/"


def test_readme_keeps_the_two_setup_commands():
    text = README.read_text(encoding="utf-8")
    for command in (
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && promptweave view examples/quickstart.py",
        'python3 -m venv .venv && . .venv/bin/activate && pip install -q -e ".[test]" && python -m pytest -q',
    ):
        assert command in text


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_no_page_over_400_lines(page):
    lines = page.read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"{page.relative_to(ROOT)} has {lines} lines; split it by topic"


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_describe_what_is_not_how_it_came_to_be(page):
    found = [f"{page.relative_to(ROOT)}:{n}: {m.group(0)!r}"
             for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             for m in DEV_LOG.finditer(line)]
    assert not found, "development-log phrases (say what is; measurements go to benchmarks/RESULTS.md):\n" + \
        "\n".join(found)


def error_codes() -> dict[str, str]:
    """Every ``code = "PWnnn"`` set in a class body under src/ (errors.py and the typed errors of other modules)."""
    codes: dict[str, str] = {}
    for path in sorted((ROOT / "src" / "promptweave").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and any(getattr(t, "id", None) == "code" for t in stmt.targets)
                        and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
                        and CODE.fullmatch(stmt.value.value)):
                    codes[stmt.value.value] = f"{node.name} ({path.relative_to(ROOT)})"
    return codes


def test_the_error_classes_are_found():
    codes = error_codes()
    assert {"PW100", "PW145", "PW210", "PW640", "PW810"} <= set(codes)
    assert "PW100" in codes and "ConfigError" in codes["PW100"]


def test_every_error_code_is_on_the_errors_page():
    documented = set(CODE.findall((DOCS / "errors.md").read_text(encoding="utf-8")))
    missing = {code: where for code, where in error_codes().items() if code not in documented}
    assert not missing, "docs/errors.md lacks these codes (add a row: code, class, meaning, what to do):\n" + \
        "\n".join(f"  {code}: {where}" for code, where in sorted(missing.items()))


def tour_commands() -> list[str]:
    """The README tour's `promptweave` commands that need no server (the stand-in server's own step is run by the
    run tests): lines of its code blocks that start with `promptweave` or `$ promptweave`."""
    text = README.read_text(encoding="utf-8")
    tour = text[text.index("## A five-minute tour"):text.index("## The documentation")]
    commands = []
    for block in re.findall(r"```(?:bash|text)\n(.*?)```", tour, flags=re.S):
        for line in block.splitlines():
            line = line.removeprefix("$ ").strip()
            if line.startswith("promptweave ") and "/tmp/pw-demo" not in line:
                commands.append(line)
            elif line.startswith("promptweave run ") and "--dry-run" in line:
                commands.append(line)
    return commands


def test_the_tour_has_its_steps():
    commands = tour_commands()
    assert any(c.startswith("promptweave view ") for c in commands)
    assert any(c.startswith("promptweave lint ") for c in commands)
    assert any(c.startswith("promptweave run ") and "--dry-run" in c for c in commands)
    assert any(c.startswith("promptweave conformance examples/") for c in commands)


@pytest.mark.parametrize("command", tour_commands())
def test_tour_command_runs_from_the_checkout(command, tmp_path):
    argv = shlex.split(command.split(" > ")[0].split(" | ")[0])
    if "*" in command:  # the shell's glob, relative to the checkout
        argv = [a for arg in argv for a in (sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(arg)) or [arg]
                                            if "*" in arg else [arg])]
    argv = [str(tmp_path / "w") if a.startswith("/tmp/pw-demo") else a for a in argv]
    proc = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


def test_tour_python_snippet_runs():
    text = README.read_text(encoding="utf-8")
    (code,) = re.findall(r"### 6\. From Python\n\n```python\n(.*?)```", text, flags=re.S)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [line.split()[0] for line in proc.stdout.splitlines()] == ["A", "B", "C", "D"]
