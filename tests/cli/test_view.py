import json
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from promptweave.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.py"
runner = CliRunner()


def test_view_quickstart_shows_first_row_of_every_dataset_and_model():
    res = runner.invoke(app, ["view", str(QUICKSTART)])
    assert res.exit_code == 0, res.output
    for pair in ("arithmetic × local-chatml", "arithmetic × api-chat", "science_mc × local-chatml"):
        assert pair in res.output
    assert "<|im_start|>assistant\n" in res.output
    assert "label 'D'" in res.output  # ppl: every label


def test_view_json_is_machine_readable_and_counts_chars():
    res = runner.invoke(app, ["view", str(QUICKSTART), "--json", "-d", "arithmetic", "-m", "local-chatml",
                              "--index", "2", "--shots"])
    assert res.exit_code == 0, res.output
    recs = json.loads(res.stdout)
    assert len(recs) == 1
    rec = recs[0]
    assert rec["index"] == 2 and rec["shot_ids"] == [0, 1, 2]
    assert rec["chars"] == len(rec["prompt"])
    assert rec["prompt"].endswith("<|im_start|>assistant\n")


def test_view_plain_when_piped_has_no_escape_codes():
    out = subprocess.run([sys.executable, "-m", "promptweave", "view", str(QUICKSTART), "-d", "science_mc",
                          "-m", "api-chat"], capture_output=True, text=True, check=True).stdout
    assert "\x1b[" not in out and "[HUMAN] Question:" in out


def test_view_unknown_dataset_names_the_choices():
    res = runner.invoke(app, ["view", str(QUICKSTART), "-d", "nope"])
    assert res.exit_code == 2
    assert "no dataset named 'nope'" in res.output and "arithmetic" in res.output


def test_view_bad_config_names_file_and_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "datasets:\n  - abbr: x\n    rows: [{q: a}]\n    reader_cfg: {input_columns: [q]}\n"
        "    infer_cfg: {prompt_template: {template: {round: not-a-list}}}\nmodels: [{abbr: m}]\n")
    res = runner.invoke(app, ["view", str(bad)])
    assert res.exit_code == 2
    assert "bad.yaml" in res.output and "datasets[0].infer_cfg.prompt_template.template.round" in res.output


def test_view_missing_reader_cfg_names_the_dataset(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("datasets:\n  - abbr: x\n    rows: [{q: a}]\n"
                   "    infer_cfg: {prompt_template: {template: '{q}'}}\nmodels: [{abbr: m}]\n")
    res = runner.invoke(app, ["view", str(bad)])
    assert res.exit_code == 2
    assert "datasets[0].reader_cfg" in res.output


def test_view_multiturn_example_shows_each_turn():
    res = runner.invoke(app, ["view", str(ROOT / "examples" / "multiturn_chat.py"), "--json", "-n", "1"])
    assert res.exit_code == 0, res.output
    recs = json.loads(res.stdout)
    turns = [r["turn"] for r in recs if r["model"] == recs[0]["model"]]
    assert turns == list(range(len(turns))) and len(turns) >= 2
    assert "<model reply to turn 0>" in json.dumps(recs[1]["prompt"])


def test_view_image_example_labels_media_and_uses_placeholders_for_text_models():
    res = runner.invoke(app, ["view", str(ROOT / "examples" / "image_qa.py")])
    assert res.exit_code == 0, res.output
    assert "[image: image/png (base64, 74 B)]" in res.output
    assert "<image>" in res.output and "cannot take media" in res.output


def test_view_retriever_example_bm25_and_topk_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    res = runner.invoke(app, ["view", str(ROOT / "examples" / "retrievers.py"), "--json", "--shots"])
    assert res.exit_code == 0, res.output
    recs = {r["dataset"]: r for r in json.loads(res.stdout)}
    for name in ("arithmetic_bm25", "arithmetic_topk"):
        rec = recs[name]
        assert len(rec["shot_ids"]) == 3 and len(set(rec["shot_ids"])) == 3
        assert all(0 <= i < 20 for i in rec["shot_ids"])
    # both find the other "packs ... boxes" questions for a "packs ... boxes" test row
    assert "packs" in recs["arithmetic_bm25"]["prompt"].split("\n")[0]


def test_lint_builds_every_prompt_and_reports_errors(tmp_path):
    res = runner.invoke(app, ["lint", str(QUICKSTART), "-m", "local-chatml"])
    assert res.exit_code == 0, res.output
    assert "ok: science_mc × local-chatml: 120 prompts from 30 rows" in res.output
    # (forms) perplexity scoring on the chat API model is refused, naming what works (the example pairs
    # science_mc with the local model only, through model_dataset_combinations)
    text = QUICKSTART.read_text()
    unpaired = tmp_path / "quickstart.py"
    unpaired.write_text(text[:text.index("model_dataset_combinations")])
    shutil.copytree(QUICKSTART.parent / "data", tmp_path / "data")  # a link out of the config folder is refused
    res = runner.invoke(app, ["lint", str(unpaired)])
    assert res.exit_code == 2 and "science_mc × api-chat: [PW160]" in res.output and "kind='lm'" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "datasets:\n  - abbr: x\n    rows: [{q: a}]\n    reader_cfg: {input_columns: [q]}\n"
        "    infer_cfg: {prompt_template: {template: {begin: [{role: CRITIC, prompt: hm}],"
        " round: [{role: HUMAN, prompt: '{q}'}]}}}\n"
        "models:\n  - abbr: m\n    meta_template: {round: [{role: HUMAN, begin: 'U:'}, {role: BOT, generate: true}]}\n")
    res = runner.invoke(app, ["lint", str(bad)])
    assert res.exit_code == 2
    assert "x × m" in res.output and "CRITIC" in res.output and "1 problem(s) found" in res.output
    assert "datasets[0].infer_cfg.prompt_template.template.begin[0].role" in res.output  # PW120 names the field
