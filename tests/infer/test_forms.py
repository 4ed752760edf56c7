"""The SC, LL and PPL-only inference forms end to end: a config file planned and run like ``promptweave run``.

SC runs against the loopback stand-in server with a scripted sequence of answers per prompt; LL and PPL-only
run on a real tiny transformers model, their numbers recomputed independently here with torch.
"""
from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path

import pytest

from promptweave.config import load_config
from promptweave.errors import PromptweaveWarning
from promptweave.run import run_tasks
from promptweave.run.plan import plan_config

ROWS = [{"question": f"q{i}", "answer": str(a)} for i, a in enumerate([4, 7, 9])]

SC_CONFIG = '''
datasets = [dict(
    abbr="arith", path="rows.jsonl",
    reader_cfg=dict(input_columns=["question"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template="Q: {question}\\nA:"),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="SCInferencer", max_out_len=20, sc_size=5, infer_type="sc",
                        generation_kwargs=dict(do_sample=True, temperature=0.7, top_k=40))),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator"), pred_postprocessor=dict(type="last_number_postprocess")),
)]
models = [dict(abbr="api", type="OpenAISDK", path="served", openai_api_base="%s", key="EMPTY", backoff_base=0,
               meta_template=dict(round=[dict(role="HUMAN", api_role="HUMAN"),
                                         dict(role="BOT", api_role="BOT", generate=True)]))]
'''


def _write(folder: Path, text: str, rows: list[dict]) -> Path:
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    p = folder / "config.py"
    p.write_text(text)
    return p


def _predictions(workdir: Path) -> list[dict]:
    [f] = list((workdir / "predictions").rglob("*.jsonl"))
    return [json.loads(line) for line in f.read_text().splitlines()]


def test_sc_votes_over_postprocessed_samples(stub_server, tmp_path) -> None:
    # per prompt, the k-th request gets the k-th scripted answer; votes are over the numbers they end with
    script = {"q0": ["so 3", "it is 4", "I say 4", "5", "4 it is... no, 4"],  # 4 wins (3 of 5)
              "q1": ["7", "8", "8", "7", "1"],  # 7 and 8 tie at 2: the first seen (7) wins
              "q2": ["2", "2", "9", "9", "2"]}  # 2 wins, gold is 9: wrong
    seen: dict[str, int] = defaultdict(int)
    lock = threading.Lock()
    bodies = []

    def answer(body: dict) -> str:
        q = body["messages"][-1]["content"].split("Q: ")[1].split("\n")[0]
        with lock:
            k = seen[q]
            seen[q] += 1
            bodies.append(body)
        return script[q][k]

    stub_server.answer = answer
    cfg = load_config(_write(tmp_path, SC_CONFIG % stub_server.url, ROWS))
    with pytest.warns(PromptweaveWarning, match="infer_type is ignored: self-consistency is the only kind"):
        tasks = plan_config(cfg)
    assert [t.mode for t in tasks] == ["sc"] and tasks[0].settings["sc_size"] == 5
    [out] = run_tasks(tasks, tmp_path / "w", show_progress=False)
    assert out.ok, out.error
    preds = _predictions(tmp_path / "w")
    assert [p["prediction"] for p in preds] == ["4", "7", "2"]
    assert [p["samples"] for p in preds][1] == ["7", "8", "8", "7", "1"]
    assert out.metrics["accuracy"] == pytest.approx(200 / 3)
    assert stub_server.total_received == 15  # sc_size requests per row, none deduplicated
    assert all(b["temperature"] == 0.7 and b["max_tokens"] == 20 for b in bodies)
    # a rerun answers every sample from the cache
    before = stub_server.total_received
    with pytest.warns(PromptweaveWarning, match="infer_type is ignored"):
        rerun = plan_config(load_config(tmp_path / "config.py"))
    run_tasks(rerun, tmp_path / "w", show_progress=False)
    assert stub_server.total_received == before


LL_CONFIG = '''
datasets = [dict(
    abbr="wino", path="rows.jsonl",
    reader_cfg=dict(input_columns=["opt1", "opt2", "cont"], output_column="answer"),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template={"A": "{opt1}", "B": "{opt2}"}),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="LLInferencer")),
    eval_cfg=dict(evaluator=dict(type="AccEvaluator")),
)]
models = [dict(abbr="tiny", type="HuggingFaceBaseModel", path="%s", batch_size=2,
               model_kwargs=dict(torch_dtype="float32", device_map="cpu"))]
'''

PPL_ONLY_CONFIG = '''
datasets = [dict(
    abbr="lm", path="rows.jsonl",
    reader_cfg=dict(input_columns=["text"], output_column=None),
    infer_cfg=dict(
        prompt_template=dict(type="PromptTemplate", template="{text}"),
        retriever=dict(type="ZeroRetriever"),
        inferencer=dict(type="PPLOnlyInferencer")),
)]
models = [dict(abbr="tiny", type="HuggingFaceBaseModel", path="%s", batch_size=2,
               model_kwargs=dict(torch_dtype="float32", device_map="cpu"))]
'''


def _token_logprobs(model_dir: Path, text: str) -> tuple[list[int], list[float]]:
    """Log-prob of tokens 2..n of ``text`` under the tiny model, computed here with plain torch."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    ids = tok(text)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0]
    lp = torch.log_softmax(logits, -1)
    return ids, [float(lp[i, ids[i + 1]]) for i in range(len(ids) - 1)]


def test_ll_picks_the_most_likely_continuation(tiny_model_dir, tmp_path) -> None:
    from transformers import AutoTokenizer

    rows = [{"opt1": "Paris is the capital of France.", "opt2": "Berlin is the capital of France.",
             "cont": " is the capital of France.", "answer": "A"},
            {"opt1": "The fox jumps over the lazy dog.", "opt2": "The dog jumps over the lazy dog.",
             "cont": " jumps over the lazy dog.", "answer": "B"}]
    cfg = load_config(_write(tmp_path, LL_CONFIG % tiny_model_dir, rows))
    tasks = plan_config(cfg)
    assert tasks[0].mode == "ll" and len(tasks[0].records) == 4
    [out] = run_tasks(tasks, tmp_path / "w", show_progress=False)
    assert out.ok, out.error
    preds = _predictions(tmp_path / "w")
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    for row, pred in zip(rows, preds, strict=True):
        expect = {}
        for label, col in (("A", "opt1"), ("B", "opt2")):
            text = row[col]
            _, lps = _token_logprobs(tiny_model_dir, text)
            n_ctx = len(tok(text[:-len(row["cont"])])["input_ids"])
            expect[label] = sum(lps[n_ctx - 1:])
        assert pred["output"] == pytest.approx(expect, abs=1e-4)
        assert pred["prediction"] == max(expect, key=lambda k: expect[k])


def test_ll_needs_the_cont_column(tiny_model_dir, tmp_path) -> None:
    from promptweave.errors import DataError

    rows = [{"opt1": "a b", "opt2": "b a", "answer": "A"}]
    text = LL_CONFIG.replace('"opt1", "opt2", "cont"', '"opt1", "opt2"') % tiny_model_dir
    cfg = load_config(_write(tmp_path, text, rows))
    with pytest.raises(DataError, match=r"config\.py: datasets\[0\]\.test\[0\]\.cont"):
        plan_config(cfg)


def test_ppl_only_predicts_each_prompts_perplexity(tiny_model_dir, tmp_path) -> None:
    rows = [{"text": "The quick brown fox jumps over the lazy dog."}, {"text": "Paris is the capital of France."}]
    cfg = load_config(_write(tmp_path, PPL_ONLY_CONFIG % tiny_model_dir, rows))
    tasks = plan_config(cfg)
    assert tasks[0].mode == "ppl_only" and len(tasks[0].records) == 2
    [out] = run_tasks(tasks, tmp_path / "w", show_progress=False)
    assert out.ok, out.error
    for row, pred in zip(rows, _predictions(tmp_path / "w"), strict=True):
        ids, lps = _token_logprobs(tiny_model_dir, row["text"])
        assert pred["prediction"] == pytest.approx(-sum(lps) / len(ids), abs=1e-4)


def test_ppl_only_refuses_an_answer_column(tiny_model_dir, tmp_path) -> None:
    from promptweave.errors import UnsupportedError

    text = PPL_ONLY_CONFIG.replace("output_column=None", 'output_column="text"') % tiny_model_dir
    cfg = load_config(_write(tmp_path, text, [{"text": "a"}]))
    with pytest.raises(UnsupportedError, match="reader_cfg.output_column"):
        plan_config(cfg)
