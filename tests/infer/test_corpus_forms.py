"""InferencePPLOnlyInferencer and SWCELossInferencer on a real tiny transformers model, planned and run like
``promptweave run``; every number is recomputed here with plain torch and the tokenizer's own offsets."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.config import load_config
from promptweave.run import run_tasks
from promptweave.run.plan import plan_config

MODEL = '''models = [dict(abbr="tiny", type="HuggingFaceBaseModel", path="%s", batch_size=2,
               model_kwargs=dict(torch_dtype="float32", device_map="cpu"))]
'''
API_MODEL = '''models = [dict(abbr="api", type="OpenAISDK", path="served", openai_api_base="http://127.0.0.1:9/v1",
               key="EMPTY")]
'''

INFERENCE_PPL = '''
datasets = [dict(
    abbr="inference-ppl", type="InferencePPLDataset", path="./data/inference_ppl", name="cn-reasoning-val",
    samples=None,
    reader_cfg=dict(input_columns=["text"], output_column=None),
    infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="{text}"),
                   retriever=dict(type="ZeroRetriever"), inferencer=dict(type="InferencePPLOnlyInferencer")),
    eval_cfg=dict(evaluator=dict(type="AverageInferencePPLEvaluator")),
)]
'''

SWCE = '''
datasets = [dict(
    abbr="llm_compression-python", type="LLMCompressionDataset", path="./data/llm-compression", name="python",
    samples=None,
    reader_cfg=dict(input_columns=["content"], output_column=None),
    infer_cfg=dict(prompt_template=dict(type="PromptTemplate", template="{content}"),
                   retriever=dict(type="ZeroRetriever"),
                   inferencer=dict(type="SWCELossInferencer", block_size=%d, stride=%d)),
    eval_cfg=dict(evaluator=dict(type="BPCEvaluator")),
)]
'''


def _model(model_dir: Path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return (AutoTokenizer.from_pretrained(model_dir),
            AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval())


def _ce(model, ids: list[int]) -> list[float]:
    """Natural-log cross-entropy of predicting ids[1:], one plain forward."""
    import torch

    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0]
    lp = torch.log_softmax(logits.float(), -1)
    return [-float(lp[i, ids[i + 1]]) for i in range(len(ids) - 1)]


def _run(tmp_path: Path, text: str) -> tuple[list, dict, list[dict]]:
    cfg_file = tmp_path / "eval_corpus.py"
    cfg_file.write_text(text)
    tasks = plan_config(load_config(cfg_file))
    [out] = run_tasks(tasks, tmp_path / "w", show_progress=False)
    assert out.ok, out.error
    [res] = list((tmp_path / "w" / "results").rglob("*.json"))
    [pred] = list((tmp_path / "w" / "predictions").rglob("*.jsonl"))
    return tasks, json.loads(res.read_text()), [json.loads(x) for x in pred.read_text().splitlines()]


# -- InferencePPLOnlyInferencer ---------------------------------------------------------------------------------

ROWS = [
    {"text": "Question: What is two plus two? Answer: four", "label": [[25, 44, 1]]},
    {"text": "Paris is the capital of France. Berlin is the capital of Germany.", "label": [[0, 5], [32, 38, 1]]},
    {"text": "The quick brown fox jumps over the lazy dog.", "label": []},
    {"text": "", "label": [[0, 1, 1]]},  # empty: dropped by the loader, as the reference does
]


def _expected_span_loss(tok, model, text: str, label: list) -> tuple[float, int]:
    """Independently: a token counts when its character offsets (from the tokenizer) meet a labelled span."""
    enc = tok(text, return_offsets_mapping=True)
    ids, offsets = enc["input_ids"], enc["offset_mapping"]
    chars = {c for span in label for c in range(span[0], span[1])}
    ce = _ce(model, ids)
    total, n = 0.0, 0
    for p, v in enumerate(ce):
        start, end = offsets[p + 1]
        if any(start <= c < end for c in chars):
            total += v
            n += 1
    return total, n


def test_inference_ppl_sums_the_loss_of_labelled_tokens(tiny_model_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data" / "inference_ppl"
    data.mkdir(parents=True)
    (data / "cn-reasoning-val.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    tasks, result, preds = _run(tmp_path, INFERENCE_PPL + MODEL % tiny_model_dir)
    assert tasks[0].mode == "inference_ppl" and tasks[0].rows == 3
    tok, model = _model(tiny_model_dir)
    sums, counts = [], []
    for row, pred in zip(ROWS, preds):
        total, n = _expected_span_loss(tok, model, row["text"], row["label"])
        assert pred["token_len"] == n
        assert pred["ppl"] == pytest.approx(total, abs=1e-4)
        sums.append(total)
        counts.append(n)
    assert counts[0] > 0 and counts[1] > 0 and counts[2] == 0
    assert result["metrics"]["average_ppl"] == pytest.approx(sum(sums) / sum(counts), abs=1e-5)


def test_inference_ppl_alignment_of_split_characters() -> None:
    from promptweave.infer.inference_ppl import align_tokens, sep_len_for, span_loss

    # a multi-byte character split over tokens decodes to U+FFFD pieces: they take one character for sep_len tokens
    assert align_tokens(["a", "\ufffd", "x", "b"], "aéb", 2) == [[0], [1], [1], [2]]
    assert align_tokens(["", " b"], "a b", 3) == [[], [1, 2]]
    assert sep_len_for("/models/Qwen2-7B") == 2 and sep_len_for("/models/gpt2") == 3
    assert span_loss([1.0, 2.0, 4.0], ["a", " b", "c"], "a bc", {2}, 3) == (2.0, 1)


def test_inference_ppl_needs_the_label_column(tiny_model_dir, tmp_path, monkeypatch) -> None:
    from promptweave.errors import DataError

    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data" / "inference_ppl"
    data.mkdir(parents=True)
    (data / "cn-reasoning-val.jsonl").write_text(json.dumps({"text": "abc"}) + "\n")
    cfg_file = tmp_path / "eval_corpus.py"
    cfg_file.write_text(INFERENCE_PPL + MODEL % tiny_model_dir)
    with pytest.raises(DataError, match=r"test\[0\]\.label"):
        plan_config(load_config(cfg_file))


@pytest.mark.parametrize("text", [INFERENCE_PPL, SWCE % (8, 3)])
def test_corpus_forms_refuse_an_api_model_at_plan_time(text, tmp_path, monkeypatch) -> None:
    from promptweave.errors import UnsupportedError

    monkeypatch.chdir(tmp_path)
    for folder, name in (("inference_ppl", "cn-reasoning-val.jsonl"), ("llm-compression", "python.json")):
        (tmp_path / "data" / folder).mkdir(parents=True)
        (tmp_path / "data" / folder / name).write_text(json.dumps({"text": "a b", "content": "a b", "label": []}))
    cfg_file = tmp_path / "eval_corpus.py"
    cfg_file.write_text(text + API_MODEL)
    tasks = plan_config(load_config(cfg_file))
    refused = tasks[0].refused
    assert isinstance(refused, UnsupportedError)
    assert "eval_corpus.py" in str(refused) and "models[0]" in str(refused)


def test_corpus_forms_take_no_answer_column(tiny_model_dir, tmp_path, monkeypatch) -> None:
    from promptweave.errors import UnsupportedError

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "llm-compression").mkdir(parents=True)
    (tmp_path / "data" / "llm-compression" / "python.json").write_text(json.dumps([{"content": "a b"}]))
    cfg_file = tmp_path / "eval_corpus.py"
    cfg_file.write_text((SWCE % (8, 3)).replace("output_column=None", 'output_column="content"')
                        + MODEL % tiny_model_dir)
    with pytest.raises(UnsupportedError, match=r"eval_corpus\.py: datasets\[0\]\.reader_cfg\.output_column"):
        plan_config(load_config(cfg_file))


# -- SWCELossInferencer -----------------------------------------------------------------------------------------

DOCS = ["def add(a, b):\n    return a + b\n", "", "The quick brown fox jumps over the lazy dog.",
        "Paris is the capital of France. Berlin is the capital of Germany.", "print('hello')"]


def _expected_bpc(tok, model, docs: list[str], block: int, stride: int) -> tuple[float, float, int]:
    """Independently: every window's forward on its own, counting predictions of tokens not scored before."""
    stream = [i for d in docs for i in tok.encode(d)]
    chars = sum(len(d) for d in docs)
    total, scored_up_to, n_windows = 0.0, 0, 0
    begin = 0
    while begin + block + 1 <= len(stream):
        window = stream[begin:begin + block + 1]
        ce = _ce(model, window)  # ce[t] predicts window[t + 1], stream position begin + t + 1
        for t, v in enumerate(ce):
            pos = begin + t + 1
            if pos >= scored_up_to or begin == 0:
                total += v
        scored_up_to = begin + block + 1
        begin += stride
        n_windows += 1
    return total / (chars * math.log(2)), total, n_windows


@pytest.mark.parametrize("block,stride", [(8, 3), (6, 10)])
def test_sw_ce_loss_bits_per_character(tiny_model_dir, tmp_path, monkeypatch, block, stride) -> None:
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data" / "llm-compression"
    data.mkdir(parents=True)
    (data / "python.json").write_text(json.dumps([{"content": d} for d in DOCS]))  # a JSON array
    tasks, result, preds = _run(tmp_path, SWCE % (block, stride) + MODEL % tiny_model_dir)
    assert tasks[0].mode == "sw_ce_loss" and tasks[0].rows == 4
    tok, model = _model(tiny_model_dir)
    bpc, total, n_windows = _expected_bpc(tok, model, [d for d in DOCS if d], block, stride)
    assert n_windows >= 2
    assert result["metrics"]["bpc"] == pytest.approx(bpc, rel=1e-5)
    assert sum(p["loss"] for p in preds) == pytest.approx(total, rel=1e-5)
    assert {p["total_chr_num"] for p in preds} == {sum(len(d) for d in DOCS)}
    if stride < block:  # windows overlap: every token after the first is scored exactly once up to the last window
        assert sum(p["scored_tokens"] for p in preds) == block + (n_windows - 1) * stride


def test_sw_ce_loss_window_larger_than_the_corpus(tiny_model_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data" / "llm-compression"
    data.mkdir(parents=True)
    (data / "python.jsonl").write_text(json.dumps({"content": "a b"}) + "\n")
    cfg_file = tmp_path / "eval_corpus.py"
    cfg_file.write_text(SWCE % (500, 3) + MODEL % tiny_model_dir)
    [out] = run_tasks(plan_config(load_config(cfg_file)), tmp_path / "w", show_progress=False)
    assert not out.ok and "fewer than block_size + 1" in out.error


def test_sw_ce_loss_windows_follow_the_reference() -> None:
    from promptweave.infer.sw_ce_loss import windows

    # 20 tokens, block 8 (windows of 9), stride 3: floor((20 - 9) / 3) + 1 = 4 windows
    got = windows(20, 8, 3)
    assert [w.begin for w in got] == [0, 3, 6, 9]
    assert [w.first_target for w in got] == [1, 6, 6, 6]
    assert windows(8, 8, 3) == []
    assert [w.first_target for w in windows(30, 4, 10)] == [1, 1, 1]


def test_the_forms_are_registered() -> None:
    from promptweave.compat.inferencers import UNSUPPORTED_INFERENCERS, resolve_inferencer

    assert resolve_inferencer("InferencePPLOnlyInferencer", {})[0].mode == "inference_ppl"
    form, notes = resolve_inferencer("SWCELossInferencer", {"block_size": 4, "stride": 2, "max_seq_len": 9})
    assert form.mode == "sw_ce_loss" and any("max_seq_len is ignored" in n for n in notes)
    assert "SWCELossInferencer" not in UNSUPPORTED_INFERENCERS


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.integers(1, 40), st.integers(1, 60))
def test_windows_score_each_token_at_most_once(n, block, stride) -> None:
    from promptweave.infer.sw_ce_loss import windows

    got = windows(n, block, stride)
    assert len(got) == (max(0, (n - block - 1) // stride + 1) if n >= block + 1 else 0)
    scored: list[int] = []
    for w in got:
        assert 1 <= w.first_target <= block and w.begin + block < n
        scored.extend(range(w.begin + w.first_target, w.begin + block + 1))
    assert len(scored) == len(set(scored))
    if got and stride <= block:  # overlapping windows leave no gap (a window's first token is only context)
        assert scored == list(range(1, got[-1].begin + block + 1))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab \u00e9", max_size=12), st.lists(st.sampled_from(["a", "b", " a", "ab", "", "\ufffd"]),
                                                               max_size=12), st.integers(1, 3))
def test_alignment_stays_inside_the_text(text, pieces, sep_len) -> None:
    from promptweave.infer.inference_ppl import align_tokens

    covered = [c for cover in align_tokens(pieces, text, sep_len) for c in cover]
    assert all(0 <= c < len(text) for c in covered)
    assert covered == sorted(covered)
