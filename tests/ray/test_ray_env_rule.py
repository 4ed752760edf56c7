"""The env rule holds on Ray workers: the driver's ``--allow-env`` list travels with the run, so a worker sends the
key the user allowed and refuses one the user did not (real local Ray, real loopback server recording headers)."""
from __future__ import annotations

import os
import textwrap

import pytest
from header_recorder import HeaderRecorder
from typer.testing import CliRunner

from promptweave.cli.app import app

KEY_VAR, SECRET = "PW_RAY_PROBE_KEY_VAR", "pw-ray-secret-51f0"


@pytest.fixture(scope="module")
def key_in_env():
    # set before Ray starts: its worker processes inherit the environment of the instance, not of the test
    os.environ[KEY_VAR] = SECRET
    yield
    os.environ.pop(KEY_VAR, None)


def _config(tmp_path, url):
    cfg = tmp_path / "c.py"
    cfg.write_text(textwrap.dedent(f"""
        datasets = [dict(abbr='d', rows=[dict(q=str(i), a='2') for i in range(4)],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{{q}}'),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')),
                         eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]
        models = [dict(abbr='m', type='OpenAISDK', path='gpt', openai_api_base='{url}', key='ENV',
                       api_key_env='{KEY_VAR}', batch_size=2)]
    """))
    return cfg


def test_workers_send_only_the_key_the_user_allowed(key_in_env, ray_instance, tmp_path):
    with HeaderRecorder() as server:
        cfg = _config(tmp_path, server.url)
        refused = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "a"), "--executor", "ray",
                                           "--no-progress"])
        assert refused.exit_code == 2 and "[PW145]" in refused.output, refused.output
        assert server.seen == []
        ok = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "b"), "--executor", "ray",
                                      "--no-progress", "--allow-env", KEY_VAR])
        assert ok.exit_code == 0, ok.output
    assert len(server.seen) == 4 and {h.get("authorization") for h in server.seen} == {f"Bearer {SECRET}"}
