"""``spread`` across two models: each model's scores over the same formats, their paired difference per format,
and the leaderboard that says whether the ranking survives the format."""
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "servers"))

from openai_stub import StubServer, format_sensitive  # noqa: E402

from promptweave.cli.app import run_cli  # noqa: E402
from promptweave.spread.stats import robustness  # noqa: E402

EXAMPLE = ROOT / "examples" / "run_openai_server.py"
ROWS = [json.loads(line) for line in (ROOT / "examples" / "data" / "science_mc.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spread2")
    shutil.copytree(ROOT / "examples" / "data", folder / "data")
    by_model = {"model-a": format_sensitive(ROWS, salt="5"), "model-b": format_sensitive(ROWS, salt="9")}
    with StubServer(answer=lambda body: by_model[body["model"]](body)) as srv:
        text = EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url)
        first = text.index("models = [")
        one = text[first:]
        models = one.replace('abbr="served-chat"', 'abbr="A"').replace('model="served-model-name"', 'model="model-a"')
        second = one.replace('abbr="served-chat"', 'abbr="B"').replace('model="served-model-name"', 'model="model-b"')
        cfg = folder / "two.py"
        cfg.write_text(text[:first] + models + "\n" + second.replace("models = [", "models += ["))
        wd = folder / "work"
        assert run_cli(["spread", str(cfg), "-w", str(wd), "-d", "science_mc", "-n", "6", "--no-progress"]) == 0
        yield json.loads((wd / "spread.json").read_text()), wd


def test_robustness_agrees_with_each_models_scores_per_variant(two_models):
    data, _ = two_models
    (rob,) = data["robustness"]
    scores = {f["model"]: [p["score"] for p in f["points"]] for f in data["figures"]}
    assert set(scores) == {"A", "B"}
    board = rob["leaderboard"]
    means = {m: sum(v) / len(v) for m, v in scores.items()}
    assert [b["model"] for b in board] == sorted(means, key=lambda m: -means[m])
    for b in board:
        assert b["mean"] == pytest.approx(means[b["model"]])
        assert b["ci95"][0] <= b["mean"] <= b["ci95"][1]
    (pair,) = rob["pairs"]
    gaps = [x - y for x, y in zip(scores[pair["leader"]], scores[pair["other"]], strict=True)]
    assert pair["leader_wins"] == sum(g > 0 for g in gaps) and pair["other_wins"] == sum(g < 0 for g in gaps)
    assert pair["mean_gap"] == pytest.approx(sum(gaps) / len(gaps)) and pair["worst_gap"] == pytest.approx(min(gaps))
    assert rob["ranking_holds"] == (pair["holds"] and pair["other_wins"] == 0 and pair["ties"] == 0)


def test_the_report_shows_the_leaderboard(two_models):
    _, wd = two_models
    html = (wd / "report.html").read_text()
    assert "leaderboard across 6 formats" in html
    assert "the ranking holds under every sampled format" in html or "the ranking depends on the format" in html


def test_robustness_of_a_format_dependent_ranking():
    rob = robustness({"x": [60, 70, 50, None], "y": [55, 72, 40, 90]})
    assert rob["shared_variants"] == 3
    assert [m["model"] for m in rob["leaderboard"]] == ["x", "y"]
    assert rob["ranking_holds"] is False and all(m["format_dependent"] for m in rob["leaderboard"])
    (p,) = rob["pairs"]
    assert (p["leader_wins"], p["other_wins"], p["ties"]) == (2, 1, 0)
    assert p["worst_gap"] == pytest.approx(-2) and p["holds"] is False
    steady = robustness({"x": [60, 70], "y": [50, 60]})
    assert steady["ranking_holds"] is True and not any(m["format_dependent"] for m in steady["leaderboard"])
