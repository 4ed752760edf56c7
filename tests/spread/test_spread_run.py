"""``promptweave spread`` end to end on the bundled example against the stand-in server, made format-sensitive."""
import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "servers"))

from openai_stub import StubServer, format_sensitive  # noqa: E402

from promptweave.cli.app import app  # noqa: E402

EXAMPLE = ROOT / "examples" / "run_openai_server.py"
ROWS = [json.loads(line) for line in (ROOT / "examples" / "data" / "science_mc.jsonl").read_text().splitlines()]
# a stand-in whose 16 formats (seed 0) have one clear best (24/30) and one clear worst (1/30) variant; the
# figures test below checks that this is so, from the spread itself
SALT = "5"


def invoke(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 0, res.output
    return res.output


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module")
def spread(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spread")
    shutil.copytree(ROOT / "examples" / "data", folder / "data")
    with StubServer(answer=format_sensitive(ROWS, salt=SALT)) as srv:
        cfg = folder / "run_openai_server.py"
        cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url))
        wd = folder / "work"
        invoke("run", str(cfg), "-w", str(wd), "-d", "science_mc", "--no-progress", "--no-report")
        after_run = srv.total_received
        out = invoke("spread", str(cfg), "-w", str(wd), "-d", "science_mc", "-n", "16", "--no-progress",
                     "--no-report")
        after_spread = srv.total_received
        again = invoke("spread", str(cfg), "-w", str(wd), "-d", "science_mc", "-n", "16", "--no-progress",
                       "--no-report")
        yield {"cfg": cfg, "wd": wd, "srv": srv, "out": out, "again": again, "after_run": after_run,
               "after_spread": after_spread, "after_rerun": srv.total_received}


def preds(wd: Path, k: int) -> list[dict]:
    return lines(wd / "variants" / str(k) / "predictions" / "served-chat" / "science_mc.jsonl")


def test_sixteen_variants_in_runs_layout(spread):
    wd = spread["wd"]
    assert sorted(int(p.name) for p in (wd / "variants").iterdir()) == list(range(16))
    for k in range(16):
        res = json.loads((wd / "variants" / str(k) / "results" / "served-chat" / "science_mc.json").read_text())
        assert res["status"] == "done" and res["rows"] == 30
        assert len(preds(wd, k)) == 30
    prompts = {json.dumps([p["prompt"] for p in preds(wd, k)]) for k in range(16)}
    assert len(prompts) == 16  # sixteen different formats


def test_variant_0_is_the_run_byte_for_byte_and_shares_its_cache(spread):
    wd = spread["wd"]
    run = (wd / "predictions" / "served-chat" / "science_mc.jsonl").read_bytes()
    assert (wd / "variants" / "0" / "predictions" / "served-chat" / "science_mc.jsonl").read_bytes() == run
    # the plain run sent 30 requests; the spread sent only the 15 other variants' 30 rows each
    assert spread["after_run"] == 30
    assert spread["after_spread"] - spread["after_run"] == 15 * 30


def test_a_rerun_sends_nothing(spread):
    assert spread["after_rerun"] == spread["after_spread"]
    assert json.loads((spread["wd"] / "spread.json").read_text())["figures"][0]["points"][3]["score"] is not None


def test_every_variant_keeps_each_rows_values(spread):
    wd = spread["wd"]
    for k in range(16):
        for p in preds(wd, k):
            row = ROWS[p["index"]]
            text = "".join(m["prompt"] for m in p["prompt"]) if isinstance(p["prompt"], list) else p["prompt"]
            for col in ("question", "A", "B", "C", "D"):
                assert row[col] in text, (k, p["index"], col)
            assert p["gold"] == row["answer"]


def test_scores_are_the_datasets_evaluator_on_each_variants_predictions(spread):
    from promptweave.config import load_config
    from promptweave.evaluate import build_evaluation

    cfg = load_config(spread["cfg"])
    ev = build_evaluation(cfg.datasets[0]["eval_cfg"], mode="gen")
    data = json.loads((spread["wd"] / "spread.json").read_text())
    fig = data["figures"][0]
    for k in range(16):
        ps = preds(spread["wd"], k)
        scores = ev.score([ev.process_prediction(p["output"]) for p in ps], [ev.process_gold(p["gold"]) for p in ps])
        assert fig["points"][k]["score"] == pytest.approx(scores.metrics["accuracy"])
        assert fig["points"][k]["description"]


def test_summary_agrees_with_the_per_variant_scores(spread):
    import itertools
    import statistics

    fig = json.loads((spread["wd"] / "spread.json").read_text())["figures"][0]
    scores = [p["score"] for p in fig["points"]]
    assert fig["min"] == min(scores) and fig["max"] == max(scores)
    assert fig["spread"] == pytest.approx(max(scores) - min(scores)) and fig["spread"] > 50
    assert fig["mean"] == pytest.approx(statistics.mean(scores))
    assert fig["std"] == pytest.approx(statistics.stdev(scores))
    assert fig["ci95"][0] <= fig["mean"] <= fig["ci95"][1]
    assert scores[fig["best"]] == max(scores) and scores[fig["worst"]] == min(scores)
    # the stand-in's extremes are clear: the search test below relies on it
    ordered = sorted(scores)
    assert ordered[-1] - ordered[-2] >= 10 and ordered[1] - ordered[0] >= 10
    table = [[1.0 if p["correct"] else 0.0 for p in preds(spread["wd"], k)] for k in range(16)]
    per_row = [sum(abs(a - b) for a, b in itertools.combinations(col, 2)) / (16 * 15 / 2) for col in zip(*table)]
    assert fig["pss"] == pytest.approx(sum(per_row) / len(per_row))
    assert f"spread {fig['spread']:.2f}" in spread["again"] and "PSS" in spread["again"]


def test_view_variant_shows_that_variants_prompts(spread):
    res = CliRunner().invoke(app, ["view", str(spread["cfg"]), "-d", "science_mc", "--variant", "7", "-n", "2",
                                   "--json"])
    assert res.exit_code == 0, res.output
    shown = json.loads(res.stdout)
    ps = preds(spread["wd"], 7)
    assert [s["prompt"] for s in shown] == [p["prompt"] for p in ps[:2]]
    fig = json.loads((spread["wd"] / "spread.json").read_text())["figures"][0]
    assert f"science_mc: variant 7 (seed 0): {fig['points'][7]['description']}" in res.stderr


def test_search_extremes_finds_the_true_best_and_worst_within_budget(spread, tmp_path):
    fig = json.loads((spread["wd"] / "spread.json").read_text())["figures"][0]
    budget = 160  # a third of running all 16 variants on 30 rows
    with StubServer(answer=format_sensitive(ROWS, salt=SALT)) as srv:
        cfg = tmp_path / "run_openai_server.py"
        shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")
        cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url))
        invoke("spread", str(cfg), "-w", str(tmp_path / "w"), "-d", "science_mc", "-n", "16", "--search",
               "extremes", "--budget", str(budget))
        sent = srv.total_received
    found = json.loads((tmp_path / "w" / "spread.json").read_text())["search"][0]
    assert (found["best"], found["worst"]) == (fig["best"], fig["worst"])
    assert found["calls_used"] <= budget and sent <= budget
    lo, hi = found["best_interval"]
    assert lo <= fig["max"] <= hi


def test_search_needs_a_budget_and_says_so(spread):
    res = CliRunner().invoke(app, ["spread", str(spread["cfg"]), "-w", str(spread["wd"]), "--search", "extremes"])
    assert res.exit_code == 2
    assert "[PW" in res.output and "--budget" in res.output


def test_report_has_the_spread_section_and_links_each_variants_rows(spread):
    wd = spread["wd"]
    invoke("report", str(wd))
    page = (wd / "report.html").read_text()
    fig = json.loads((wd / "spread.json").read_text())["figures"][0]
    assert "Format spread" in page and f"spread {fig['spread']:.2f}" in page and f"PSS {fig['pss']:.3f}" in page
    assert page.count("<circle") == 16 and "(best)" in page and "(worst)" in page
    for k in range(16):
        assert f"variants/{k}/report.html" in page
        assert (wd / "variants" / str(k) / "report.html").is_file()
    # report A B on two variants' folders, as on two runs
    invoke("report", str(wd / "variants" / "0"), str(wd / "variants" / str(fig["best"])))
    assert (wd / "variants" / str(fig["best"]) / "compare.html").is_file()


def test_prompt_variants_pass_lint_and_run_as_variants(tmp_path):
    extra = '''
science["prompt_variants"] = [
    dict(round=[dict(role="HUMAN", prompt="Pick one.\\n{question}\\n(A) {A}\\n(B) {B}\\n(C) {C}\\n(D) {D}")]),
]
'''
    shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")
    with StubServer() as srv:
        cfg = tmp_path / "c.py"
        cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url) + extra)
        res = CliRunner().invoke(app, ["lint", str(cfg)])
        assert res.exit_code == 0, res.output
        invoke("spread", str(cfg), "-w", str(tmp_path / "w"), "-d", "science_mc", "-n", "3", "--limit", "4",
               "--no-progress", "--no-report")
    data = json.loads((tmp_path / "w" / "spread.json").read_text())
    assert [v["source"] for v in data["datasets"][0]["variants"]] == ["config", "prompt_variants[0]", "grammar"]
    first = lines(tmp_path / "w" / "variants" / "1" / "predictions" / "served-chat" / "science_mc.jsonl")[0]
    assert first["prompt"][0]["prompt"].startswith("Pick one.\n" + ROWS[0]["question"] + "\n(A) ")
    cfg.write_text(cfg.read_text().replace("{question}\\n(A)", "{questoin}\\n(A)"))
    res = CliRunner().invoke(app, ["lint", str(cfg)])
    assert res.exit_code == 2 and "prompt_variants[0]" in res.output and "questoin" in res.output, res.output


def test_failed_rows_are_data(tmp_path):
    from openai_stub import Fault

    shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")

    def faults(key, attempt, body):  # variant 1's prompts (lower-case 'question') always fail
        return Fault("status", 400) if "question =" in json.dumps(body) else None

    with StubServer(faults=faults) as srv:
        cfg = tmp_path / "c.py"
        cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url))
        res = CliRunner().invoke(app, ["spread", str(cfg), "-w", str(tmp_path / "w"), "-d", "science_mc", "-n",
                                       "3", "--limit", "4", "--no-progress", "--no-report"])
    # every row of variant 1 failed: that variant failed (it is no score of 0), its cause is said, and a rerun
    # retries its rows
    assert res.exit_code == 1, res.output
    assert "failed: science_mc × served-chat: every row failed: http_400 ×4" in " ".join(res.output.split())
    bad = lines(tmp_path / "w" / "variants" / "1" / "predictions" / "served-chat" / "science_mc.jsonl")
    assert len(bad) == 4 and all(p.get("error") and p["correct"] is False for p in bad)
    fig = json.loads((tmp_path / "w" / "spread.json").read_text())["figures"][0]
    assert fig["points"][1]["score"] is None and fig["points"][1]["status"] == "failed" and fig["scored"] == 2


def test_a_spread_only_folder_gets_a_page_of_its_own(tmp_path):
    shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")
    with StubServer() as srv:
        cfg = tmp_path / "c.py"
        cfg.write_text(EXAMPLE.read_text().replace("http://127.0.0.1:8000/v1", srv.url))
        out = invoke("spread", str(cfg), "-w", str(tmp_path / "w"), "-d", "arithmetic", "-n", "3", "--limit", "3",
                     "--no-progress")
    assert "report: " in out
    page = (tmp_path / "w" / "report.html").read_text()
    assert "<title>promptweave spread · w</title>" in page and page.count("<circle") == 3
    for k in range(3):
        assert (tmp_path / "w" / "variants" / str(k) / "report.html").is_file()


def test_lint_dry_run_and_run_agree_on_bad_prompt_variants(tmp_path):
    shutil.copytree(ROOT / "examples" / "data", tmp_path / "data")
    cfg = tmp_path / "c.py"
    cfg.write_text(EXAMPLE.read_text() + '\nscience["prompt_variants"] = ["{questoin} A-D?"]\n')
    for args in (["lint", str(cfg)], ["run", str(cfg), "-w", str(tmp_path / "w"), "--dry-run"],
                 ["run", str(cfg), "-w", str(tmp_path / "w")]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2 and "datasets[0].prompt_variants[0]" in res.output, (args, res.output)
    assert not (tmp_path / "w" / "cache.sqlite").exists()  # refused before anything was sent
