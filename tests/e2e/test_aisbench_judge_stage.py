"""AISBench's judge stage (a dataset's ``judge_infer_cfg``) with promptweave alone: the judge's requests, its
verdicts in the predictions and the report, results under AISBench's name, a rerun answered from the cache, and
what the stage cannot run refused at plan time by lint, dry-run and run alike. (The request bodies and the score
are compared with AISBench's own run in ``test_aisbench_parity.py``, case ``aime2025_llmjudge``.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptweave.cli.app import app
from tests.e2e.aisbench_parity import BY_NAME, setup_case

CASE = BY_NAME["aime2025_llmjudge"]


@pytest.fixture
def judged(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with CASE.server() as server:
        cfg, cache = setup_case(CASE, tmp_path, server.port)
        monkeypatch.setenv("AIS_BENCH_DATASETS_CACHE", str(cache))
        yield cfg, server


def _run(cfg: Path, work: Path, *extra: str):
    return CliRunner().invoke(app, ["run", str(cfg), "-w", str(work), "--no-progress", *extra])


def test_judge_stage_results_predictions_and_resume(judged, tmp_path):
    cfg, server = judged
    work = tmp_path / "work"
    res = _run(cfg, work)
    assert res.exit_code == 0, res.output
    assert server.total_received == 20  # 10 candidate requests, then 10 judge requests
    result = json.loads(next(work.glob("results/*/aime2025-judge.json")).read_text())
    assert result["metrics"] == {"accuracy": 60.0}
    assert not list(work.glob("results/*/aime2025.json"))  # AISBench writes only the judged name
    rows = [json.loads(x) for x in next(work.glob("predictions/*/aime2025-judge.jsonl")).read_text().splitlines()]
    first = min(rows, key=lambda r: r["index"])
    # the candidate's raw reply is quoted to the judge, with the gold and the question
    judge_prompt = first["judge"]["prompt"]
    assert judge_prompt[0]["role"] == "SYSTEM" and "evaluates the correctness" in judge_prompt[0]["prompt"]
    assert first["output"] in judge_prompt[1]["prompt"] and "<Gold Target Begin>: \n70\n" in judge_prompt[1]["prompt"]
    # the verdict as get_a_or_b read it: "A." ends in '.', so it is a B
    by_index = {r["index"]: r for r in rows}
    assert by_index[8]["judge"]["output"] == "A." and by_index[8]["judge"]["grade"] == "B"
    assert by_index[7]["judge"]["grade"] == "A" and by_index[7]["correct"] is True
    # the view shows the judge's prompt and verdict per row
    shown = CliRunner().invoke(app, ["view", str(cfg), "--judge", str(work), "-n", "10"])
    assert shown.exit_code == 0, shown.output
    assert "grading expert" in shown.output and "grade B" in shown.output
    # a rerun sends nothing: candidate and judge replies come from the cache
    res = _run(cfg, work)
    assert res.exit_code == 0, res.output
    assert server.total_received == 20


@pytest.mark.parametrize(("edit", "field"), [
    ("datasets[0]['judge_infer_cfg']['judge_dataset_type'] = 'GEditSCJDGDataset'\n",
     "datasets[0].judge_infer_cfg.judge_dataset_type"),
    ("datasets[0]['judge_infer_cfg']['inferencer'] = dict(type='PPLInferencer')\n",
     "datasets[0].judge_infer_cfg.inferencer.type"),
    ("datasets[0]['judge_infer_cfg']['judge_sampler'] = 1\n", "datasets[0].judge_infer_cfg.judge_sampler"),
])
def test_what_the_stage_cannot_run_is_refused_alike(judged, tmp_path, edit, field):
    cfg, server = judged
    cfg.write_text(cfg.read_text() + edit)
    for args in (["lint", str(cfg)], ["run", str(cfg), "-w", str(tmp_path / "w"), "--dry-run"],
                 ["run", str(cfg), "-w", str(tmp_path / "w"), "--no-progress"]):
        res = CliRunner().invoke(app, args)
        out = " ".join(res.output.split())
        assert res.exit_code != 0 and "[PW650]" in out and field in out, (args[0], res.output)
    assert server.total_received == 0


def test_dry_run_names_the_judged_task(judged, tmp_path):
    cfg, server = judged
    res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp_path / "w"), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "aime2025-judge" in res.output and server.total_received == 0
