"""The commands that run a config share one options definition and one library call: ``run`` and ``spread`` have
the same flags (spread adds its variant flags), ``lint`` the selection, policy and scoring flags; each command
function is short; ``spread --allow-env`` sends a key from the environment to a loopback server that needs it."""
from __future__ import annotations

import ast
import dataclasses
import sys
import textwrap
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.cli.options import FLAGS, flags
from promptweave.run.options import RunOptions

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "servers"))

from header_recorder import HeaderRecorder  # noqa: E402

SECRET = "pw-house-key-41c9"
KEY_VAR = "PWHOUSE_API_KEY"
# the deliberate differences: spread's variant flags, lint's own flags (lint sends nothing, so no execute group)
SPREAD_ONLY = {"n", "seed", "search", "budget"}
LINT_ONLY = {"configs", "no_data", "verbose"}
RUN_ONLY = {"mode"}  # what a run measures: answers (accuracy) or serving performance (perf)
# over the limit, each with why (none now): the test fails when one grows past its figure or another joins
LONG_COMMANDS: dict[str, int] = {}


def _params(name: str) -> dict[str, click.Parameter]:
    root = typer.main.get_command(app)
    return {p.name: p for p in root.commands[name].params}  # type: ignore[attr-defined]


def test_run_and_spread_have_the_same_flags() -> None:
    run, spread = _params("run"), _params("spread")
    assert set(spread) - SPREAD_ONLY == set(run) - RUN_ONLY
    for name in set(run) - RUN_ONLY:  # the same spelling too (-w / --work-dir, --allow-env, --code-sandbox ...)
        assert run[name].opts == spread[name].opts, name
    assert {"allow_env", "code_sandbox", "allow_code_exec", "judge_model"} <= set(spread)


def test_lint_has_runs_selection_policy_and_scoring_flags() -> None:
    lint = _params("lint")
    assert set(lint) - LINT_ONLY == {f.param for f in flags("select", "policy", "scoring")}
    assert {"allow_code_exec", "code_sandbox", "judge_model"} <= set(lint)  # lint makes run's checks with them
    assert set(lint) - LINT_ONLY < set(_params("run"))


def test_every_run_flag_is_defined_once_and_sets_an_options_field() -> None:
    fields = {f.name for f in dataclasses.fields(RunOptions)}
    assert len({f.param for f in FLAGS}) == len(FLAGS)
    assert {f.to for f in FLAGS} == fields  # every field has its flag, every flag a field
    assert set(_params("run")) == {f.param for f in FLAGS} | {"config"}


def _function_lengths(folder: Path) -> dict[str, int]:
    out = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.endswith("_cmd"):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                out[f"{path.name}:{node.name}"] = node.end_lineno - first + 1
    return out


def test_every_command_function_is_at_most_60_lines() -> None:
    lengths = _function_lengths(ROOT / "src" / "promptweave" / "cli")
    assert {"run.py:run_cmd", "spread.py:spread_cmd", "lint.py:lint_cmd"} <= set(lengths)
    over = {k: v for k, v in lengths.items() if v > 60}
    assert set(over) <= set(LONG_COMMANDS) and all(v <= LONG_COMMANDS[k] for k, v in over.items()), over


def test_a_bad_option_value_is_one_typed_line(tmp_path) -> None:
    from promptweave.errors import RunOptionsError

    with pytest.raises(RunOptionsError, match=r"\[PW180\] --on-row-error"):
        RunOptions(on_row_error="maybe").check()
    for argv in (["run", "c.py", "--code-sandbox", "none"], ["spread", "c.py", "-w", str(tmp_path), "--executor",
                                                              "slurm"]):
        res = CliRunner().invoke(app, argv)
        assert res.exit_code == 2 and "[PW180]" in res.output and "Traceback" not in res.output, res.output


def _config(tmp_path: Path, url: str) -> Path:
    cfg = tmp_path / "c.py"
    cfg.write_text(textwrap.dedent(f"""
        datasets = [dict(abbr='d', rows=[dict(q='1+1', a='2'), dict(q='3-1', a='2')],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='Q: {{q}}\\nA:'),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')),
                         eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]
        models = [dict(abbr='m', type='OpenAISDK', path='gpt', openai_api_base='{url}', key='ENV',
                       api_key_env='{KEY_VAR}')]
    """))
    return cfg


def test_spread_allow_env_sends_the_key_a_loopback_server_needs(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(KEY_VAR, SECRET)
    with HeaderRecorder(require=SECRET) as server:
        cfg = _config(tmp_path, server.url)
        work = tmp_path / "w"
        refused = CliRunner().invoke(app, ["spread", str(cfg), "-w", str(work), "-n", "2", "--no-progress"])
        assert refused.exit_code == 2 and "[PW145]" in refused.output, refused.output
        assert f"--allow-env {KEY_VAR}" in refused.output and server.seen == []  # nothing sent without the flag
        res = CliRunner().invoke(app, ["spread", str(cfg), "-w", str(work), "-n", "2", "--no-progress",
                                       "--no-report", "--allow-env", KEY_VAR])
        assert res.exit_code == 0, res.output
        assert server.seen and all(h.get("authorization") == f"Bearer {SECRET}" for h in server.seen)
        assert SECRET not in res.output
    assert (work / "variants" / "1").is_dir() and (work / "spread.json").is_file()


def test_the_library_call_runs_a_config_and_returns_its_outcomes(tmp_path, monkeypatch) -> None:
    import promptweave
    from promptweave.run.pipeline import RunResult

    monkeypatch.setenv(KEY_VAR, SECRET)
    with HeaderRecorder(require=SECRET) as server:
        cfg = _config(tmp_path, server.url)
        plan = promptweave.evaluate_config(cfg, RunOptions(workdir=tmp_path / "w", dry_run=True,
                                                           allow_env=[KEY_VAR]))
        assert isinstance(plan, RunResult) and plan.outcomes == [] and server.seen == []
        assert [(t.dataset, t.model_name, t.rows) for t in plan.tasks] == [("d", "m", 2)]
        done = promptweave.evaluate_config(cfg, RunOptions(workdir=tmp_path / "w", show_progress=False,
                                                           allow_env=[KEY_VAR]))
    assert done.ok and done.complete and [o.ok for o in done.outcomes] == [True]
    assert len(server.seen) == 2 and done.report == tmp_path / "w" / "report.html" and done.report.is_file()
