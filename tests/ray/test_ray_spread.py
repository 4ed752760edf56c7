"""``spread --executor ray``: each variant through the Ray executor gives the local spread's files, one cache."""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer
from ray_helpers import example, outputs
from typer.testing import CliRunner

from promptweave.cli.app import app

pytestmark = pytest.mark.slow  # a real Ray instance


def spread(*args: str):
    return CliRunner().invoke(app, ["spread", *args, "--no-progress", "--no-report"])


def test_spread_on_ray_matches_local(ray_instance, tiny_model_dir, tmp_path) -> None:
    with StubServer() as srv:
        cfg = example(tmp_path, "run_openai_server.py", srv.url, tiny_model_dir)
        local = spread(str(cfg), "-w", str(tmp_path / "local"), "-n", "3", "--limit", "6")
        sent_local = srv.received.copy()
        srv.received.clear()
        on_ray = spread(str(cfg), "-w", str(tmp_path / "ray"), "-n", "3", "--limit", "6", "--executor", "ray")
        sent_ray = srv.received.copy()
        srv.received.clear()
        again = spread(str(cfg), "-w", str(tmp_path / "ray"), "-n", "3", "--limit", "6", "--executor", "ray")
        assert srv.total_received == 0  # a rerun sends nothing
    assert local.exit_code == 0, local.output
    assert on_ray.exit_code == 0 and again.exit_code == 0, on_ray.output + again.output
    for k in range(3):
        got = outputs(tmp_path / "ray" / "variants" / str(k))
        assert got and got == outputs(tmp_path / "local" / "variants" / str(k))
    assert sent_ray == sent_local
    assert (tmp_path / "ray" / "cache.sqlite").exists()  # one cache for every variant
    assert not list((tmp_path / "ray" / "variants").rglob("cache.sqlite"))
    figs = [json.loads((tmp_path / d / "spread.json").read_text())["figures"] for d in ("local", "ray")]
    strip = [[{k: v for k, v in f.items() if k != "points"} for f in fs] for fs in figs]
    assert strip[0] == strip[1]
