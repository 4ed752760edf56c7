"""``report A B``: the paired comparison of two runs with known per-row outcomes, every number checked.

The work dirs are written as a run writes them (``results/<model>/<dataset>.json`` and the predictions file with
each row's ``correct``); a real run's results file gets ``n`` and ``metrics_ci95`` too (the toy run).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_stub import StubServer

from promptweave.cli.app import run_cli
from promptweave.evaluate.intervals import holm, newcombe_paired, wilson
from promptweave.run import run_tasks
from tests.run.toy_run import toy_tasks

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy (in the test extra) is the independent check")


def write_run(root: Path, model: str, outcomes: dict[str, list[bool]], *, bleu: float | None = None) -> Path:
    for ds, verdicts in outcomes.items():
        pred = root / "predictions" / model / f"{ds}.jsonl"
        pred.parent.mkdir(parents=True, exist_ok=True)
        pred.write_text("".join(json.dumps({"index": i, "prompt": f"q{i}", "prediction": "x", "gold": "x",
                                            "correct": ok}) + "\n" for i, ok in enumerate(verdicts)))
        metrics = {"accuracy": 100 * sum(verdicts) / len(verdicts)}
        if bleu is not None:
            metrics["bleu"] = bleu
        res = root / "results" / model / f"{ds}.json"
        res.parent.mkdir(parents=True, exist_ok=True)
        res.write_text(json.dumps({"dataset": ds, "model": model, "mode": "gen", "status": "done",
                                   "rows": len(verdicts), "metrics": metrics, "predictions": str(pred)}))
    return root


def compare(a: Path, b: Path, tmp_path: Path) -> tuple[int, dict, str]:
    out = tmp_path / "cmp.json"
    code = run_cli(["report", str(a), str(b), "-o", str(tmp_path / "cmp.html"), "--json", str(out)])
    return code, json.loads(out.read_text()), (tmp_path / "cmp.html").read_text()


def test_every_number_of_a_paired_comparison(tmp_path: Path, capsys) -> None:
    # 60 rows: both right 30, only A 3, only B 15, neither 12 -> a clear difference for B
    a_ok = [True] * 30 + [True] * 3 + [False] * 15 + [False] * 12
    b_ok = [True] * 30 + [False] * 3 + [True] * 15 + [False] * 12
    # a second dataset with no difference at all
    same = [True, False] * 10
    a = write_run(tmp_path / "A", "m", {"d1": a_ok, "d2": same}, bleu=10.0)
    b = write_run(tmp_path / "B", "m", {"d1": b_ok, "d2": same}, bleu=12.0)
    code, got, html = compare(a, b, tmp_path)
    assert code == 0
    tasks = {(t["dataset"], t["metric"]): t for t in got["tasks"]}
    t1 = tasks[("d1", "accuracy")]
    assert (t1["model_a"], t1["model_b"], t1["n"]) == ("m", "m", 60)
    assert t1["a"] == pytest.approx(100 * 33 / 60) and t1["b"] == pytest.approx(100 * 45 / 60)
    assert t1["delta"] == pytest.approx(100 * 12 / 60)
    assert t1["p_value"] == pytest.approx(scipy_stats.binomtest(3, 18, 0.5).pvalue, rel=1e-9)
    assert "mcnemar" in t1["test"]
    lo, hi = newcombe_paired(30, 3, 15, 12)
    assert t1["ci95"] == pytest.approx([100 * lo, 100 * hi])
    assert t1["ci95"][0] > 0 and t1["p_value"] < 0.05 and t1["significant"] is True
    t2 = tasks[("d2", "accuracy")]
    assert t2["delta"] == 0 and t2["p_value"] == 1.0 and t2["significant"] is False
    assert t2["ci95"][0] < 0 < t2["ci95"][1]
    bleu = tasks[("d1", "bleu")]
    assert bleu["delta"] == pytest.approx(2.0) and bleu["p_value"] is None and bleu["significant"] is None
    raw = [t["p_value"] for t in got["tasks"]]
    assert [t["p_holm"] for t in got["tasks"]] == pytest.approx(holm(raw))
    assert "significant" in html and "not significant" in html and "Holm" in html
    err = capsys.readouterr().err
    assert "d1 · m · accuracy: 55.00 → 75.00 (Δ +20.00" in err and "McNemar p =" in err


def test_identical_runs_give_delta_zero_and_p_one(tmp_path: Path) -> None:
    ok = [True, False, True, True, False, True, False, True]
    a = write_run(tmp_path / "A", "m", {"d": ok})
    _, got, _ = compare(a, a, tmp_path)
    (t,) = got["tasks"]
    assert t["delta"] == 0 and t["p_value"] == 1.0 and t["n"] == len(ok)


def test_runs_of_one_model_each_under_other_abbrs_pair_by_dataset_and_say_so(tmp_path: Path, capsys) -> None:
    a = write_run(tmp_path / "A", "ckpt-100", {"d": [True, False] * 10})
    b = write_run(tmp_path / "B", "ckpt-200", {"d": [True, True] * 10})
    code, got, _ = compare(a, b, tmp_path)
    assert code == 0 and got["paired_by"] == "dataset"
    (t,) = got["tasks"]
    assert (t["model_a"], t["model_b"], t["n"]) == ("ckpt-100", "ckpt-200", 20)
    assert t["p_value"] == pytest.approx(scipy_stats.binomtest(0, 10, 0.5).pvalue)
    assert "paired by dataset: model 'ckpt-100' in A with model 'ckpt-200' in B" in capsys.readouterr().err


def test_json_needs_two_work_dirs(tmp_path: Path, capsys) -> None:
    a = write_run(tmp_path / "A", "m", {"d": [True]})
    assert run_cli(["report", str(a), "--json", str(tmp_path / "x.json")]) != 0
    assert "[PW800]" in capsys.readouterr().err


def test_a_real_runs_results_carry_n_and_a_wilson_interval(tmp_path: Path) -> None:
    answers = iter("ABCDABCDAB")
    with StubServer(answer=lambda body: next(answers, "A")) as server:
        outs = run_tasks(toy_tasks(server.url)[:1], tmp_path / "w", show_progress=False)
    res = json.loads((tmp_path / "w/results/stub-model/toy-gen.json").read_text())
    rows = [json.loads(line) for line in (tmp_path / "w/predictions/stub-model/toy-gen.jsonl").read_text().splitlines()]
    k = sum(1 for r in rows if r["correct"])
    lo, hi = wilson(k, len(rows))
    assert res["n"] == len(rows) == 10
    assert res["metrics_ci95"]["accuracy"] == pytest.approx([100 * lo, 100 * hi])
    assert res["ci_method"]["accuracy"] == "wilson"
    assert outs[0].ci95["accuracy"] == res["metrics_ci95"]["accuracy"]


def test_the_single_run_page_shows_each_interval(tmp_path: Path) -> None:
    answers = iter("ABCDABCDAB")
    with StubServer(answer=lambda body: next(answers, "A")) as server:
        run_tasks(toy_tasks(server.url)[:1], tmp_path / "w", show_progress=False)
    assert run_cli(["report", str(tmp_path / "w"), "-o", str(tmp_path / "r.html")]) == 0
    res = json.loads((tmp_path / "w/results/stub-model/toy-gen.json").read_text())
    lo, hi = res["metrics_ci95"]["accuracy"]
    html = (tmp_path / "r.html").read_text()
    assert 'id="interval-table"' in html and f"{lo:.2f} – {hi:.2f}" in html and "wilson" in html
