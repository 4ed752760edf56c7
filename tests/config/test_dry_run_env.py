"""`run --dry-run` lists the environment variables a safe-mode config read (names, never values)."""
from __future__ import annotations

import textwrap

from typer.testing import CliRunner

from promptweave.cli.app import app


def test_dry_run_lists_env_reads_without_values(tmp_path, monkeypatch):
    monkeypatch.setenv("PW_DRY_DATA_DIR", "value-never-shown")
    cfg = tmp_path / "c.py"
    cfg.write_text(textwrap.dedent("""
        import os
        where = os.environ.get('PW_DRY_DATA_DIR', 'x')
        other = os.getenv('PW_DRY_UNSET')
        datasets = [dict(abbr='d', rows=[dict(q='1+1', a='2')],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{q}'),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')))]
        models = [dict(abbr='m', type='OpenAI', path='gpt', openai_api_base='http://127.0.0.1:9/v1')]
    """))
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--dry-run", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "PW_DRY_DATA_DIR (set)" in res.output and "PW_DRY_UNSET (unset)" in res.output
    assert "value-never-shown" not in res.output
