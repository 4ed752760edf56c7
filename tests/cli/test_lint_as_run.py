"""``lint`` makes the checks ``run --dry-run`` makes after planning, with the same flags: code evaluators need
``--allow-code-exec`` (and a sandbox that works here), a judged dataset needs a judge, whatever the command.

The HumanEval case is OpenCompass's own shipped dataset config (skipped without the --no-deps config tree), its
problems written in the reference's layout under a data cache.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from promptweave.cli.app import run_cli
from promptweave.cli.common import ExitCode
from tests.data import layouts

HUMANEVAL = "opencompass/configs/datasets/humaneval/humaneval_gen_8e312c.py"
EVAL = '''from mmengine.config import read_base

with read_base():
    from opencompass.configs.datasets.humaneval.humaneval_gen_8e312c import humaneval_datasets

datasets = humaneval_datasets
models = [dict(abbr="m", type="OpenAISDK", path="served", openai_api_base="http://127.0.0.1:9/v1", key="EMPTY")]
'''
JUDGED = '''datasets = [dict(abbr="arith", path="rows.json",
    reader_cfg=dict(input_columns=["question"], output_column="answer"),
    infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template=dict(round=[dict(role="HUMAN",
        prompt="Q: {question}")])), retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="GenInferencer", max_out_len=4)),
    eval_cfg=dict(evaluator=dict(type="LMEvaluator", judge_cfg=dict(), prompt_template=dict(type="PromptTemplate",
        template=dict(round=[dict(role="HUMAN", prompt="Is {prediction} right?")])))))]
models = [dict(abbr="m", type="OpenAISDK", path="served", openai_api_base="http://127.0.0.1:9/v1", key="EMPTY")]
'''


def _site() -> Path:
    spec = importlib.util.find_spec("opencompass")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the opencompass config tree (a --no-deps install) is not here")
    return Path(next(iter(spec.submodule_search_locations))).parent


def _cli(capsys, *args: object) -> tuple[int, str]:
    code = run_cli([str(a) for a in args])
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


def _codes(out: str) -> list[str]:
    import re

    return sorted(set(re.findall(r"\[(PW\d{3})\]", out)))


@pytest.fixture
def humaneval(tmp_path: Path, monkeypatch) -> Path:
    _site()
    cache = tmp_path / "cache"
    monkeypatch.setenv("COMPASS_DATA_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    layouts.plain_jsonl(cache, "data/humaneval/human-eval-v2-20210705.jsonl", [
        {"task_id": "HumanEval/0", "prompt": 'def add(a, b):\n    """[q0] add"""\n', "canonical_solution": "    pass\n",
         "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}])
    cfg = tmp_path / "eval_humaneval.py"
    cfg.write_text(EVAL)
    return cfg


def test_a_humaneval_config_needs_allow_code_exec_in_lint_as_in_run(capsys, humaneval: Path, tmp_path: Path) -> None:
    lint_code, lint_out = _cli(capsys, "lint", humaneval)
    dry_code, dry_out = _cli(capsys, "run", humaneval, "--dry-run")
    run_code, run_out = _cli(capsys, "run", humaneval, "-w", tmp_path / "w", "--no-progress", "--no-report")
    assert _codes(lint_out) == _codes(dry_out) == _codes(run_out) == ["PW630"], (lint_out, dry_out, run_out)
    assert lint_code == dry_code == run_code == ExitCode.BAD_INPUT
    assert "--allow-code-exec" in lint_out and "eval_cfg.evaluator.type" in lint_out


def test_with_allow_code_exec_lint_and_dry_run_agree(capsys, humaneval: Path) -> None:
    # where bubblewrap works both pass; where it does not, both refuse with the same sandbox error
    lint_code, lint_out = _cli(capsys, "lint", humaneval, "--allow-code-exec")
    dry_code, dry_out = _cli(capsys, "run", humaneval, "--dry-run", "--allow-code-exec")
    assert _codes(lint_out) == _codes(dry_out), (lint_out, dry_out)
    assert (lint_code == 0) == (dry_code == 0), (lint_out, dry_out)
    assert "PW630" not in lint_out


def test_the_shipped_dataset_config_says_so_once_and_lints_with_the_flag(capsys) -> None:
    path = _site() / HUMANEVAL
    code, out = _cli(capsys, "lint", "--no-data", path)
    assert code == ExitCode.BAD_INPUT and out.count("[PW630]") == 1, out  # the dataset's verdict, not per stand-in
    code, out = _cli(capsys, "lint", "--no-data", "--allow-code-exec", "--code-sandbox", "rlimits", path)
    assert code == 0 and "[PW630]" not in out, out
    assert "--code-sandbox=rlimits" in out  # the weaker sandbox is warned about, as run warns


def test_a_judged_dataset_needs_a_judge_in_lint_as_in_run(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rows.json").write_text('[{"question": "1+1?", "answer": "2"}]')
    cfg = tmp_path / "judged.py"
    cfg.write_text(JUDGED)
    lint_code, lint_out = _cli(capsys, "lint", cfg)
    dry_code, dry_out = _cli(capsys, "run", cfg, "--dry-run")
    assert _codes(lint_out) == _codes(dry_out) == ["PW610"], (lint_out, dry_out)
    assert lint_code == dry_code == ExitCode.BAD_INPUT
    lint_code, lint_out = _cli(capsys, "lint", cfg, "--judge-model", "m")
    dry_code, dry_out = _cli(capsys, "run", cfg, "--dry-run", "--judge-model", "m")
    assert lint_code == dry_code == 0, (lint_out, dry_out)
    lint_code, lint_out = _cli(capsys, "lint", cfg, "--judge-model", "nobody")
    assert lint_code == ExitCode.BAD_INPUT and "--judge-model" in lint_out and "nobody" in lint_out
