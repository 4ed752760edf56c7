"""``--num-gpus`` / ``--num-cpus`` reach the Ray executor: a replica asking for more than the cluster has is refused
with the figures it asked for, and one that fits runs (real local Ray with 2 CPUs and no GPU, loopback server)."""
from __future__ import annotations

import textwrap

from openai_stub import StubServer
from typer.testing import CliRunner

from promptweave.cli.app import app


def _config(tmp_path, url):
    cfg = tmp_path / "c.py"
    cfg.write_text(textwrap.dedent(f"""
        datasets = [dict(abbr='d', rows=[dict(q=str(i), a='2') for i in range(4)],
                         reader_cfg=dict(input_columns=['q'], output_column='a'),
                         infer_cfg=dict(prompt_template=dict(type='PromptTemplate', template='{{q}}'),
                                        retriever=dict(type='ZeroRetriever'),
                                        inferencer=dict(type='GenInferencer')),
                         eval_cfg=dict(evaluator=dict(type='AccEvaluator')))]
        models = [dict(abbr='m', type='OpenAISDK', path='gpt', openai_api_base='{url}', key='EMPTY',
                       batch_size=2)]
    """))
    return cfg


def _run(cfg, work, *options):
    return CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--executor", "ray", "--no-progress",
                                    *options])


def test_num_gpus_and_num_cpus_set_what_each_replica_asks_for(ray_instance, tmp_path):
    with StubServer(answer=lambda body: "2") as server:
        cfg = _config(tmp_path, server.url)
        too_big = _run(cfg, tmp_path / "a", "--num-gpus", "2", "--num-cpus", "3")
        assert too_big.exit_code != 0, too_big.output
        text = " ".join(too_big.output.split())
        assert "asks for 2 GPU(s) and 3 CPU(s) per replica but the Ray cluster has 0 GPU(s) and 2 CPU(s)" in text
        assert "Traceback" not in too_big.output
        assert server.total_received == 0  # refused before anything was sent
        fits = _run(cfg, tmp_path / "b", "--num-gpus", "0", "--num-cpus", "1")
        assert fits.exit_code == 0, fits.output
        assert server.total_received == 4
