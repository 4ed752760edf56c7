"""``promptweave run`` end to end against the stand-in OpenAI server.

The prompt engine (config loading, ``build_prompts``) is the lead's part and is not on
this branch yet, so these tests install a small stand-in engine module, named as such.
"""
from __future__ import annotations

import json
import sys
import types

import pytest
from openai_stub import StubServer
from typer.testing import CliRunner

import promptweave.config
from promptweave.cli.app import app
from promptweave.infer import Record


def _stand_in_engine(monkeypatch, url: str, n: int = 6) -> None:
    datasets = [{"abbr": "toy", "reader_cfg": {"output_column": "answer"},
                 "infer_cfg": {"inferencer": {"type": "GenInferencer", "max_out_len": 16}},
                 "eval_cfg": {"evaluator": {"type": "AccEvaluator"},
                              "pred_postprocessor": {"type": "first_option_postprocess", "options": "ABCD"}}},
                {"abbr": "toy-ppl", "reader_cfg": {"output_column": "answer"},
                 "infer_cfg": {"inferencer": {"type": "opencompass.openicl.icl_inferencer.PPLInferencer"}}}]
    models = [{"type": "OpenAISDK", "abbr": "stub", "path": "stub-model", "openai_api_base": url, "key": "x",
               "batch_size": 4, "backoff_base": 0}]

    def build_prompts(ds, model, mode="gen", indices=None):
        idx = list(indices) if indices is not None else list(range(n))
        if mode == "ppl":
            return [Record(index=i, label=lab, mode="ppl", row={"answer": "A"}, rendered=f"item {i} {lab}")
                    for i in idx for lab in "AB"]
        return [Record(index=i, row={"answer": "ABCD"[i % 4]},
                       rendered=[{"role": "user", "content": f"question {i}"}]) for i in idx]

    engine = types.ModuleType("promptweave.engine")
    engine.build_prompts = build_prompts
    monkeypatch.setitem(sys.modules, "promptweave.engine", engine)
    monkeypatch.setattr(promptweave.config, "load_config",
                        lambda path: types.SimpleNamespace(datasets=datasets, models=models), raising=False)


@pytest.fixture
def config_file(tmp_path):
    p = tmp_path / "cfg.py"
    p.write_text("# read by the stand-in engine\n")
    return p


def test_dry_run_sends_nothing(monkeypatch, stub_server: StubServer, config_file, tmp_path) -> None:
    _stand_in_engine(monkeypatch, stub_server.url)
    res = CliRunner().invoke(app, ["run", str(config_file), "-w", str(tmp_path / "w"), "--dry-run", "--limit", "3"])
    assert res.exit_code == 0, res.output
    assert "toy-ppl" in res.output and "ppl" in res.output
    assert stub_server.total_received == 0
    assert not (tmp_path / "w").exists()


def test_run_writes_predictions_and_resumes_from_cache(monkeypatch, stub_server: StubServer, config_file,
                                                       tmp_path) -> None:
    _stand_in_engine(monkeypatch, stub_server.url)
    work = tmp_path / "w"
    args = ["run", str(config_file), "-w", str(work), "--no-progress"]
    res = CliRunner().invoke(app, args + ["--limit", "4"])
    assert res.exit_code == 0, res.output
    assert "accuracy" in res.output
    assert stub_server.total_answered == 4 + 4 * 2
    rows = [json.loads(x) for x in (work / "predictions" / "stub" / "toy.jsonl").read_text().splitlines()]
    assert [r["index"] for r in rows] == [0, 1, 2, 3]
    assert all(r["correct"] == (r["prediction"] == r["gold"]) for r in rows)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert stub_server.total_answered == 6 + 6 * 2  # only the rows beyond the first run's limit were sent
    assert max(stub_server.answered.values()) == 1


def test_failed_task_gives_exit_code_1(monkeypatch, config_file, tmp_path) -> None:
    from openai_stub import Fault

    with StubServer(faults=lambda k, a, b: Fault("status", 401, message="bad key")) as srv:
        _stand_in_engine(monkeypatch, srv.url)
        res = CliRunner().invoke(app, ["run", str(config_file), "-w", str(tmp_path / "w"), "--no-progress"])
    assert res.exit_code == 1
    assert "401" in res.output
