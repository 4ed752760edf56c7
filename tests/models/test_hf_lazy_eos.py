"""The local backend: weights load only when a call is not cached, a load failure is written per task, and
with no stop words generation ends at the generation config's / tokenizer's eos (ChatML ``<|im_end|>``)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from promptweave.evaluate import build_evaluation
from promptweave.infer import Record
from promptweave.models.base import GenerationParams
from promptweave.models.hf import HFModel
from promptweave.run import Task, run_tasks


def _tasks(make):
    gen = [Record(index=i, rendered=f"Question: {i}? Answer:", row={"a": "A"}) for i in range(3)]
    ppl = [Record(index=i, label=lab, rendered=f"Q: {i} Answer: {lab}", row={"a": "B"}) for i in range(2)
           for lab in "AB"]
    return [Task("g", "tiny", make, gen, "gen", GenerationParams(max_out_len=3),
                 build_evaluation({"pred_postprocessor": {"type": "strip"}}), gold_column="a"),
            Task("p", "tiny", make, ppl, "ppl", evaluation=build_evaluation(None, mode="ppl"), gold_column="a")]


def test_cached_rerun_loads_no_weights_and_sent_is_counted(tiny_model_dir, tmp_path) -> None:
    made: list[HFModel] = []

    def make():
        made.append(HFModel(str(tiny_model_dir), device="cpu", dtype="float32", batch_size=4))
        return made[-1]

    first = run_tasks(_tasks(make), tmp_path, show_progress=False)
    assert made[0].loaded and [o.sent for o in first] == [3, 4]
    assert [s["sent"] for s in json.loads((tmp_path / "summary.json").read_text())] == [3, 4]
    preds = (tmp_path / "predictions" / "tiny" / "g.jsonl").read_text()

    again = run_tasks(_tasks(make), tmp_path, show_progress=False)
    assert not made[1].loaded  # every call was cached: the weights were never read
    assert [o.sent for o in again] == [0, 0] and all(o.complete for o in again)
    assert (tmp_path / "predictions" / "tiny" / "g.jsonl").read_text() == preds


def test_a_model_that_fails_to_load_writes_each_tasks_status(tiny_model_dir, tmp_path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model_dir, broken)
    (broken / "model.safetensors").write_bytes(b"not weights")
    outs = run_tasks(_tasks(lambda: HFModel(str(broken), device="cpu", dtype="float32")), tmp_path / "w",
                     show_progress=False)
    assert [o.ok for o in outs] == [False, False]
    for name in ("g", "p"):
        result = json.loads((tmp_path / "w" / "results" / "tiny" / f"{name}.json").read_text())
        assert result["status"] == "failed" and "[PW400]" in result["error"] and "weights" in result["error"]

    bad_path = tmp_path / "nowhere" / "model"
    outs = run_tasks(_tasks(lambda: HFModel(str(bad_path), device="cpu")), tmp_path / "w2", show_progress=False)
    for name in ("g", "p"):  # fails in the constructor: still one status file per task
        result = json.loads((tmp_path / "w2" / "results" / "tiny" / f"{name}.json").read_text())
        assert result["status"] == "failed" and "no model folder" in result["error"]


def _chatml_model(src: Path, dst: Path) -> int:
    """A copy of the tiny model that always predicts ``<|im_end|>`` (kept as text when decoded), whose
    generation config names it as eos while the tokenizer's eos stays ``<|endoftext|>`` (as Qwen's chat models)."""
    import torch
    from transformers import AutoTokenizer, GenerationConfig, GPT2LMHeadModel

    shutil.copytree(src, dst)
    tok = AutoTokenizer.from_pretrained(dst)
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    model = GPT2LMHeadModel.from_pretrained(dst)
    with torch.no_grad():  # constant final hidden state h; lm_head (tied) row of <|im_end|> = 10 h: it always wins
        h = torch.ones(model.config.n_embd)
        model.transformer.ln_f.weight.zero_()
        model.transformer.ln_f.bias.copy_(h)
        model.transformer.wte.weight[im_end] = 10 * h
    model.save_pretrained(dst)
    GenerationConfig(eos_token_id=[im_end, tok.eos_token_id], bos_token_id=tok.bos_token_id).save_pretrained(dst)
    for name in ("tokenizer_config.json", "special_tokens_map.json"):  # decode keeps <|im_end|> as text
        p = dst / name
        if p.exists():
            cfg = json.loads(p.read_text())
            cfg["additional_special_tokens"] = ["<|im_start|>"]
            for entry in (cfg.get("added_tokens_decoder") or {}).values():
                if entry.get("content") == "<|im_end|>":
                    entry["special"] = False
            p.write_text(json.dumps(cfg))
    tj = json.loads((dst / "tokenizer.json").read_text())
    for entry in tj["added_tokens"]:
        if entry["content"] == "<|im_end|>":
            entry["special"] = False
    (dst / "tokenizer.json").write_text(json.dumps(tj))
    return im_end


def test_without_stop_words_generation_stops_at_the_generation_configs_eos(tiny_model_dir, tmp_path) -> None:
    im_end = _chatml_model(tiny_model_dir, tmp_path / "chatml")
    m = HFModel(str(tmp_path / "chatml"), device="cpu", dtype="float32")
    assert im_end in m.eos_ids and m.tokenizer.eos_token_id in m.eos_ids
    assert m.tokenizer.decode([im_end, im_end], skip_special_tokens=True) == "<|im_end|><|im_end|>"
    out = m.generate(["<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"], GenerationParams(max_out_len=6))
    assert out == [""]  # stopped at the first <|im_end|>, not 6 of them
