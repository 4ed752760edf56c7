"""``--executor ray`` on a real local Ray instance gives the local executor's results, file for file."""
from __future__ import annotations

import contextlib

import pytest
from openai_stub import StubServer
from ray_helpers import differences, example, outputs, parsed_outputs
from typer.testing import CliRunner

from promptweave.cli.app import app
from promptweave.errors import PromptweaveWarning

EXAMPLES = ["quickstart.py", "run_openai_server.py", "multiturn_chat.py", "image_qa.py"]

pytestmark = pytest.mark.slow  # real Ray instances: about a minute per module


def run(*args: str):
    return CliRunner().invoke(app, ["run", *args, "--no-progress"])


@pytest.mark.parametrize("name", EXAMPLES)
def test_bundled_example_matches_local(name, ray_instance, tiny_model_dir, tmp_path) -> None:
    with StubServer() as srv:
        cfg = example(tmp_path, name, srv.url, tiny_model_dir)
        local = run(str(cfg), "-w", str(tmp_path / "local"))
        sent_local = srv.received.copy()
        srv.received.clear()
        # the image example's text-only model is told, where the driver plans it, that media become placeholders
        media = (pytest.warns(PromptweaveWarning, match="cannot take media") if name == "image_qa.py"
                 else contextlib.nullcontext())
        with media:
            ray_run = run(str(cfg), "-w", str(tmp_path / "ray"), "--executor", "ray", "--workers", "2")
        sent_ray = srv.received.copy()
    assert ray_run.exit_code == local.exit_code, ray_run.output
    assert differences(parsed_outputs(tmp_path / "ray"), parsed_outputs(tmp_path / "local")) == []
    assert outputs(tmp_path / "local")  # something was written
    assert sent_ray == sent_local  # the same requests, each as many times


def test_rerun_skips_committed_shards(ray_instance, tiny_model_dir, tmp_path) -> None:
    with StubServer() as srv:
        cfg = example(tmp_path, "run_openai_server.py", srv.url, tiny_model_dir)
        first = run(str(cfg), "-w", str(tmp_path / "w"), "--executor", "ray", "--shard-rows", "7")
        assert first.exit_code == 0, first.output
        shards = sorted(p.name for p in (tmp_path / "w" / "shards").rglob("*.json"))
        before = srv.total_received
        again = run(str(cfg), "-w", str(tmp_path / "w"), "--executor", "ray", "--shard-rows", "7")
        assert again.exit_code == 0, again.output
    assert srv.total_received == before  # nothing sent again
    assert sorted(p.name for p in (tmp_path / "w" / "shards").rglob("*.json")) == shards
    assert "0-7.json" in shards


def test_unknown_executor_is_a_clear_error(tmp_path, tiny_model_dir) -> None:
    cfg = example(tmp_path, "quickstart.py", "http://127.0.0.1:9/v1", tiny_model_dir)
    res = run(str(cfg), "-w", str(tmp_path / "w"), "--executor", "dask")
    assert res.exit_code != 0
    assert "--executor" in res.output and "local or ray" in res.output


def test_api_concurrency_is_cluster_wide(ray_instance, tiny_model_dir, tmp_path) -> None:
    """Three workers of a model allowed 3 concurrent requests never have more than 3 in flight together."""
    with StubServer(latency=0.02) as srv:
        cfg = example(tmp_path, "run_openai_server.py", srv.url, tiny_model_dir)
        cfg.write_text(cfg.read_text().replace("batch_size=16", "batch_size=3"))
        res = run(str(cfg), "-w", str(tmp_path / "ray"), "--executor", "ray", "--workers", "3", "--shard-rows", "3")
        assert res.exit_code == 0, res.output
        assert srv.peak_in_flight <= 3
        assert srv.total_answered == srv.total_received == 57
        local = run(str(cfg), "-w", str(tmp_path / "local"))
    assert local.exit_code == 0
    assert differences(parsed_outputs(tmp_path / "ray"), parsed_outputs(tmp_path / "local")) == []


def test_progress_shows_rows_and_throughput(ray_instance, tiny_model_dir, tmp_path) -> None:
    with StubServer() as srv:
        cfg = example(tmp_path, "run_openai_server.py", srv.url, tiny_model_dir)
        res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--executor", "ray",
                                       "--shard-rows", "10"])
    assert res.exit_code == 0, res.output
    assert "all tasks (rows)" in res.output and "57/57" in res.output
    assert "served-chat · science_mc" in res.output and "30/30" in res.output
    assert "rows/s" in res.output


def test_a_template_error_is_refused_at_plan_time_as_locally(tiny_model_dir, tmp_path) -> None:
    """A role the meta template lacks: both executors refuse with the same typed error before anything is sent
    (Ray is not started, the work dir is not created), rather than Ray reporting a failed task."""
    with StubServer() as srv:
        cfg = example(tmp_path, "run_openai_server.py", srv.url, tiny_model_dir)
        text = cfg.read_text()
        bad = text.replace('template=dict(round=[dict(role="HUMAN", prompt=_question)])',
                           'template=dict(round=[dict(role="ASKER", prompt=_question)])')
        assert bad != text
        cfg.write_text(bad)
        local = run(str(cfg), "-w", str(tmp_path / "local"))
        ray_run = run(str(cfg), "-w", str(tmp_path / "ray"), "--executor", "ray")
        assert srv.total_received == 0
    assert local.exit_code == ray_run.exit_code != 0
    error = [line for line in local.output.splitlines() if "[PW120]" in line]
    assert error and "datasets[0].infer_cfg.prompt_template.template.round[0].role" in error[0]
    assert [line for line in ray_run.output.splitlines() if "[PW120]" in line] == error
    assert not (tmp_path / "ray").exists() and not (tmp_path / "local").exists()
