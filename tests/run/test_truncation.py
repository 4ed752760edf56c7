"""Truncation is data: each row says whether and how the model cut its prompt, on every run, cached or not."""
from __future__ import annotations

import json
import warnings

from test_run_cli import LOCAL_MODEL, write_config

from promptweave.cli.app import run_cli


def _run(cfg, work) -> tuple[int, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = run_cli(["run", str(cfg), "-w", str(work), "--no-progress", "--no-report"])
    return code, [str(w.message) for w in caught if "cut" in str(w.message)]


def _cut_config(tmp_path, tiny_model_dir, max_seq_len: int):
    model = LOCAL_MODEL.format(path=tiny_model_dir).replace("batch_size=4,", f"batch_size=4, max_seq_len={max_seq_len},")
    return write_config(tmp_path, "mcq_gen", model)


def test_cut_rows_are_recorded_and_a_cached_rerun_keeps_the_count(tmp_path, tiny_model_dir) -> None:
    cfg = _cut_config(tmp_path, tiny_model_dir, 40)  # 40 - max_out_len 16 = 24 tokens for the prompt
    work = tmp_path / "w"
    code, cut_warnings = _run(cfg, work)
    assert code == 0
    preds = [json.loads(x) for x in (work / "predictions" / "tiny" / "mcq-gen.jsonl").read_text().splitlines()]
    result = json.loads((work / "results" / "tiny" / "mcq-gen.json").read_text())
    cut = [p for p in preds if "truncated" in p]
    assert cut and result["truncated_prompts"] == len(cut)
    # tokens used: a local model counts what it received, per row and for the task
    assert all(p["prompt_tokens"] > 0 for p in preds)
    assert result["tokens"]["prompt"] == sum(p["prompt_tokens"] for p in preds)
    assert result["tokens"]["counted"].startswith("exact")
    assert cut[0]["prompt_tokens"] == cut[0]["truncated"]["tokens_before"]
    t = cut[0]["truncated"]
    assert t["side"] == "left" and t["tokens_after"] == 24 and t["tokens_before"] > 24
    assert t["max_seq_len"] == 40 and t["reserved"] == 16
    prompt = cut[0]["prompt"]
    assert 0 < t["dropped_chars"] < len(prompt)
    assert prompt[t["dropped_chars"]:].endswith("<|im_start|>assistant\n")  # the question's end is kept
    # one warning per task, saying how many rows and why
    assert len(cut_warnings) == 1 and f"{len(cut)} of 5 prompt(s) longer than 24 tokens" in cut_warnings[0]
    # a fully cached rerun records the same
    assert _run(cfg, work)[0] == 0
    again = json.loads((work / "results" / "tiny" / "mcq-gen.json").read_text())
    assert again["truncated_prompts"] == len(cut)
    preds2 = [json.loads(x) for x in (work / "predictions" / "tiny" / "mcq-gen.jsonl").read_text().splitlines()]
    assert [p.get("truncated") for p in preds2] == [p.get("truncated") for p in preds]


def test_no_cut_is_recorded_as_zero(tmp_path, tiny_model_dir) -> None:
    cfg = _cut_config(tmp_path, tiny_model_dir, 400)
    work = tmp_path / "w"
    assert _run(cfg, work)[0] == 0
    result = json.loads((work / "results" / "tiny" / "mcq-gen.json").read_text())
    assert result["truncated_prompts"] == 0
    preds = [json.loads(x) for x in (work / "predictions" / "tiny" / "mcq-gen.jsonl").read_text().splitlines()]
    assert not any("truncated" in p for p in preds)


def test_view_tokens_flags_a_row_over_the_budget(tmp_path, capsys) -> None:
    from tests.report.tiny_tokenizer import build_tokenizer

    folder = build_tokenizer(tmp_path / "tok")
    (tmp_path / "rows.json").write_text(json.dumps([{"q": "What is two plus two? " * 8, "a": "4"}, {"q": "2+2?", "a": "4"}]))
    cfg = tmp_path / "cfg.py"
    cfg.write_text(
        'datasets = [dict(abbr="long", path="rows.json", reader_cfg=dict(input_columns=["q"], output_column="a"), '
        'infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="Q: {q}\\nA:"), '
        'retriever=dict(type="ZeroRetriever"), inferencer=dict(type="GenInferencer", max_out_len=4)))]\n'
        f'models = [dict(abbr="lm", type="HuggingFaceCausalLM", path={str(folder)!r}, max_seq_len=20, '
        'max_out_len=64)]\n')
    assert run_cli(["view", str(cfg), "--tokens", "-i", "0", "-i", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # the inferencer's max_out_len (4) wins over the model's (64), as in OpenCompass: budget 20 - 4 = 16
    assert out.count("over budget:") == 1
    assert "exceed the prompt budget of 16 (model max_seq_len 20 less max_out_len 4)" in out
    assert "run cuts it from the left to its last 16 tokens" in out
    assert run_cli(["view", str(cfg), "--tokens", "-i", "0", "--json"]) == 0
    [rec] = json.loads(capsys.readouterr().out)
    assert rec["token_count"] > 16 and "run cuts it" in rec["over_budget"]


def test_self_consistency_rows_record_their_cut_too(tmp_path, tiny_model_dir) -> None:
    # sc samples generations from the same cut prompt as gen: the form says so (Form.prompt_cut), not a mode list
    model = LOCAL_MODEL.format(path=tiny_model_dir).replace("batch_size=4,", "batch_size=4, max_seq_len=40,")
    cfg = write_config(tmp_path, "mcq_gen", model)
    text = cfg.read_text().replace('inferencer=dict(type="GenInferencer", max_out_len=16)',
                                   'inferencer=dict(type="SCInferencer", max_out_len=16, sc_size=2, '
                                   'generation_kwargs=dict(do_sample=True, temperature=1.0))', 1)
    assert "SCInferencer" in text
    cfg.write_text(text)
    work = tmp_path / "w"
    code, cut_warnings = _run(cfg, work)
    assert code == 0
    preds = [json.loads(x) for x in (work / "predictions" / "tiny" / "mcq-gen.jsonl").read_text().splitlines()]
    cut = [p for p in preds if "truncated" in p]
    assert cut and all(len(p["samples"]) == 2 for p in preds)
    assert cut[0]["truncated"]["tokens_after"] == 24 and cut[0]["truncated"]["reserved"] == 16
    result = json.loads((work / "results" / "tiny" / "mcq-gen.json").read_text())
    assert result["truncated_prompts"] == len(cut) and len(cut_warnings) == 1
