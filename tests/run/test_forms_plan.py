"""Planning refuses, at plan time and naming the config file, what a run could not do."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.config import load_config
from promptweave.errors import UnsupportedError
from promptweave.run.plan import plan_config

CONFIG = '''
ds = dict(abbr="mc", path="rows.jsonl",
          reader_cfg=dict(input_columns=["q", "cont"], output_column={output}),
          infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template={{"A": "{{q}} A", "B": "{{q}} B"}}),
                         retriever=dict(type="ZeroRetriever"), inferencer=dict(type="{inferencer}")),
          eval_cfg=dict(evaluator=dict(type="{evaluator}")))
datasets = [ds]
models = [dict(abbr="m", type="{model}", path="served", openai_api_base="http://127.0.0.1:9/v1"{extra})]
'''


def write(tmp: Path, inferencer: str = "PPLInferencer", evaluator: str = "AccEvaluator", model: str = "OpenAISDK",
          extra: str = "") -> Path:
    (tmp / "rows.jsonl").write_text(json.dumps({"q": "x", "cont": " A", "answer": "A"}) + "\n")
    p = tmp / "eval_x.py"
    output = "None" if inferencer == "PPLOnlyInferencer" else '"answer"'
    p.write_text(CONFIG.format(inferencer=inferencer, evaluator=evaluator, model=model, extra=extra, output=output))
    return p


@pytest.mark.parametrize("inferencer", ["PPLInferencer", "LLInferencer", "PPLOnlyInferencer"])
def test_scoring_on_a_chat_api_model_names_what_works(tmp_path, inferencer) -> None:
    # refused at plan time for this pair only: the task carries the typed error and fails with it when run
    [task] = plan_config(load_config(write(tmp_path, inferencer)))
    exc = task.refused
    assert isinstance(exc, UnsupportedError) and not task.records
    msg = str(exc)
    assert "eval_x.py: models[0].kind" in msg and "kind='lm'" in msg and "local model" in msg


def test_a_refused_pair_fails_alone_in_run_and_is_a_lint_problem(stub_server, tmp_path) -> None:
    cfg = write(tmp_path, "PPLInferencer").read_text()
    gen = cfg.replace("datasets = [ds]", 'datasets = [ds, dict(ds, abbr="mc-gen", infer_cfg=dict(ds["infer_cfg"], '
                      'prompt_template=dict(type="PromptTemplate", template="{q}"), '
                      'inferencer=dict(type="GenInferencer")))]').replace("http://127.0.0.1:9/v1", stub_server.url)
    (tmp_path / "eval_x.py").write_text(gen)
    res = CliRunner().invoke(app, ["run", str(tmp_path / "eval_x.py"), "-w", str(tmp_path / "w"), "--no-progress",
                                   "--no-report"])
    assert res.exit_code == 1 and res.output.count("failed: ") == 1, res.output
    assert "failed: mc × m: [PW160]" in res.output and stub_server.total_received == 1
    res = CliRunner().invoke(app, ["lint", str(tmp_path / "eval_x.py")])
    assert res.exit_code == 2 and "ok: mc-gen × m" in res.output and "mc × m: [PW160]" in res.output


def test_scoring_on_a_completions_endpoint_plans(tmp_path) -> None:
    [task] = plan_config(load_config(write(tmp_path, extra=', kind="lm"')))
    assert task.mode == "ppl" and len(task.records) == 2


def test_run_errors_name_the_config_file(tmp_path) -> None:
    res = CliRunner().invoke(app, ["run", str(write(tmp_path, "GenInferencer", "NoSuchEvaluator")), "--dry-run"])
    assert res.exit_code != 0 and "eval_x.py" in res.output and "datasets[0].eval_cfg.evaluator.type" in res.output
    res = CliRunner().invoke(app, ["run", str(write(tmp_path, "MinKPercentInferencer")), "--dry-run"])
    assert res.exit_code != 0 and "[PW160]" in res.output and "datasets[0].infer_cfg.inferencer.type" in res.output
    res = CliRunner().invoke(app, ["run", str(write(tmp_path, "GenInferencer", model="Gemini")), "--dry-run"])
    assert res.exit_code != 0 and "models[0].type" in res.output and "Gemini" in res.output


def test_dry_run_shows_the_new_forms(tmp_path) -> None:
    cfg = write(tmp_path, "SCInferencer", extra=', kind="lm"').read_text().replace(
        'type="SCInferencer"', 'type="SCInferencer", sc_size=3')
    (tmp_path / "eval_x.py").write_text(cfg.replace('{"A": "{q} A", "B": "{q} B"}', '"{q}"'))
    res = CliRunner().invoke(app, ["run", str(tmp_path / "eval_x.py"), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert " sc " in res.output or "│ sc" in res.output


def test_judge_model_types_are_checked(tmp_path) -> None:
    cfg = write(tmp_path, "GenInferencer").read_text().replace(
        'eval_cfg=dict(evaluator=dict(type="AccEvaluator"))',
        'eval_cfg=dict(evaluator=dict(type="AccEvaluator", judge_cfg=dict(type="Claude", path="c")))')
    (tmp_path / "eval_x.py").write_text(cfg)
    with pytest.raises(UnsupportedError, match=r"eval_x\.py: datasets\[0\]\.eval_cfg\.evaluator\.judge_cfg\.type"):
        plan_config(load_config(tmp_path / "eval_x.py"))
