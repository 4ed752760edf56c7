"""Every command ends in an exit status from one table and, on an error, one ``error: [PWnnn] ...`` line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import promptweave
from promptweave.cli.app import run_cli
from promptweave.cli.common import ExitCode

ROOT = Path(__file__).resolve().parents[2]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = run_cli(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys) -> None:
    code, out, _ = cli(capsys, "--version")
    assert code == 0 and out.strip() == f"promptweave {promptweave.__version__}"


def test_exit_codes_are_distinct_and_documented() -> None:
    values = [c.value for c in ExitCode]
    assert len(values) == len(set(values))
    page = (ROOT / "docs" / "running.md").read_text()
    for c in ExitCode:
        assert f"| {c.value} | `{c.name}`" in page, f"exit code {c.name} is missing from docs/running.md's table"


@pytest.mark.parametrize("command", ["view", "lint", "run"])
def test_same_error_same_code_in_every_command(capsys, tmp_path, command) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("datasets: [1, 2\n")
    code, out, err = cli(capsys, command, str(bad))
    # the same bad input gives the same code from every command
    assert code == ExitCode.BAD_INPUT
    lines = [x for x in (out + err).splitlines() if x.startswith("error:")]
    assert lines and lines[0].startswith("error: [PW1") and "bad.yaml" in lines[0]
    assert len(lines) == 1 or command == "lint"  # lint also prints a per-file summary line
    assert "Traceback" not in out + err


@pytest.mark.parametrize("command", ["view", "lint", "run"])
def test_missing_config_file_is_bad_input(capsys, tmp_path, command) -> None:
    code, out, err = cli(capsys, command, str(tmp_path / "nope.py"))
    assert code == ExitCode.BAD_INPUT and "Traceback" not in out + err and "nope.py" in out + err


def test_usage_error_is_bad_input(capsys) -> None:
    code, _, err = cli(capsys, "run", "--no-such-option")
    assert code == ExitCode.BAD_INPUT and "No such option" in err


def test_an_unexpected_exception_is_one_line_and_debug_shows_the_traceback(capsys, monkeypatch, tmp_path) -> None:
    from promptweave import config

    def boom(*a, **k):
        raise ZeroDivisionError("the unexpected")

    monkeypatch.setattr(config, "load_config", boom)
    code, _out, err = cli(capsys, "view", str(tmp_path / "x.py"))
    assert code == ExitCode.INTERNAL
    assert err.strip().count("\n") == 0 and err.startswith("error: [PW001] ")
    assert "test_errors.py:" in err and "ZeroDivisionError: the unexpected" in err and "--debug" in err
    code, _out, err = cli(capsys, "--debug", "view", str(tmp_path / "x.py"))
    assert code == ExitCode.INTERNAL and "Traceback (most recent call last)" in err and "[PW001]" in err


def test_keyboard_interrupt_exits_130(capsys, monkeypatch, tmp_path) -> None:
    from promptweave import config

    def stop(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(config, "load_config", stop)
    code, _, err = cli(capsys, "view", str(tmp_path / "x.py"))
    assert code == ExitCode.INTERRUPTED and "Traceback" not in err


def test_lone_surrogate_nul_and_huge_field_flow_through_view_run_and_a_cached_rerun(tmp_path) -> None:
    """Bytes a real dataset holds: through prompts, the SQLite cache keys, the predictions and the terminal."""
    sys.path.insert(0, str(ROOT / "tests" / "servers"))
    from openai_stub import StubServer

    rows = [{"question": "lone \ud800 surrogate", "answer": "A"}, {"question": "nul \x00 byte", "answer": "B"},
            {"question": "huge " + "x" * 200_000, "answer": "C"}, {"question": "emoji 🙂 \udfff", "answer": "D"}]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))  # \u-escaped in the file
    with StubServer(answer=lambda body: "A") as srv:
        (tmp_path / "c.py").write_text(f'''
datasets = [dict(abbr="odd", path="d.jsonl",
                 reader_cfg=dict(input_columns=["question"], output_column="answer"),
                 infer_cfg=dict(prompt_template=dict(type="PromptTemplate",
                                                     template=dict(round=[dict(role="HUMAN", prompt="Q: {{question}}")])),
                                retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer")))]
models = [dict(abbr="api", type="OpenAICompatModel", kind="api", base_url="{srv.url}", model="m", key="EMPTY",
               meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                         dict(role="BOT", api_role="BOT", generate=True)]))]
''')
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONIOENCODING": "utf-8"}
        base = [sys.executable, "-m", "promptweave"]
        view = subprocess.run(base + ["view", str(tmp_path / "c.py"), "-n", "4"], env=env, capture_output=True, check=False)
        assert view.returncode == 0, view.stderr.decode()
        assert b"lone \\ud800 surrogate" in view.stdout  # printed escaped, not a UnicodeEncodeError
        for attempt in range(2):
            res = subprocess.run(base + ["run", str(tmp_path / "c.py"), "-w", str(tmp_path / "w"), "--no-progress"],
                                 env=env, capture_output=True, check=False)
            assert res.returncode == 0, res.stderr.decode()
            assert srv.total_received == 4  # the rerun hit the cache for every row, surrogates included
    preds = [json.loads(x) for x in (tmp_path / "w" / "predictions" / "api" / "odd.jsonl").read_text().splitlines()]
    assert preds[0]["prompt"][0]["prompt"] == "Q: lone \ud800 surrogate"
    assert preds[1]["prompt"][0]["prompt"] == "Q: nul \x00 byte" and len(preds[2]["prompt"][0]["prompt"]) > 200_000
