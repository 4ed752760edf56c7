"""AISBench parity: eval configs written the way AISBench's docs write them, run by promptweave and by AISBench.

Each :class:`Case` is one such config (``read_base`` imports of a shipped dataset config and AISBench's
``vllm_api_general_chat`` / ``vllm_api_general`` service model), the stand-in data it reads (AISBench's on-disk
layout under ``$AIS_BENCH_DATASETS_CACHE``) and a scripted model: the loopback stand-in server answers the last
``[qN]`` marker of each request from the case's table.

A run gives the scores (``results`` per dataset abbr) and the request bodies as a multiset of hashes (sha256 of
the endpoint path and the body as JSON with sorted keys). ``record()`` runs AISBench's own CLI
(``ais_bench CONFIG --debug -w DIR --num-warmups 0``) from a reference venv (named by
``$PROMPTWEAVE_AIS_FULL_VENV``: ``ais_bench_benchmark`` installed with its dependencies) and writes what it saw to
``fixtures/aisbench_parity.json``, so the promptweave side is checked without that venv:

    python -m tests.e2e.aisbench_parity [CASE ...]      # re-record from the reference venv
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "servers"))

from openai_stub import StubServer  # noqa: E402

from tests.data.mm_files import png  # noqa: E402

FIXTURE = HERE / "fixtures" / "aisbench_parity.json"
MARK = re.compile(r"\[q(\d+)\]")
MODELS = "ais_bench.benchmark.configs.models.vllm_api"
DATASETS = "ais_bench.benchmark.configs.datasets"


def reference_venv() -> Path | None:
    """The reference venv with AISBench installed with its dependencies, when ``$PROMPTWEAVE_AIS_FULL_VENV`` names
    one (opt-in: a reference run takes a minute a config)."""
    if not os.environ.get("PROMPTWEAVE_AIS_FULL_VENV"):
        return None
    venv = Path(os.environ["PROMPTWEAVE_AIS_FULL_VENV"])
    return venv if (venv / "bin" / "ais_bench").exists() else None


def request_hash(path: str, body: dict) -> str:
    text = json.dumps([path.rstrip("/").rsplit("/v1", 1)[-1], body], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


# -- stand-in data in AISBench's layouts -------------------------------------------------------------------


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _csv(path: Path, rows: list[list[str]], header: list[str] | None = None) -> None:
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        if header:
            w.writerow(header)
        w.writerows(rows)


def _gsm8k(root: Path) -> None:
    rows = [{"question": f"[q{i}] Tom has {i} apples and buys 2 more. How many?", "answer": f"{i}+2\n#### {i + 2}"}
            for i in range(6)]
    for split in ("train", "test"):
        _jsonl(root / "gsm8k" / f"{split}.jsonl", rows)


def _mmlu(root: Path) -> None:
    name = "abstract_algebra"
    dev = [[f"[q{90 + i}] dev question {i}", "w", "x", "y", "z", "ABCD"[i % 4]] for i in range(5)]
    test = [[f"[q{i}] What is {i}?", "w", "x", "y", "z", "ABCD"[i % 4]] for i in range(6)]
    _csv(root / "mmlu" / "dev" / f"{name}_dev.csv", dev)
    _csv(root / "mmlu" / "test" / f"{name}_test.csv", test)


def _ceval(root: Path) -> None:
    name = "computer_network"
    header = ["id", "question", "A", "B", "C", "D", "answer", "explanation"]
    recs = [[str(i), f"[q{i}] 问题 {i}", "甲", "乙", "丙", "丁", "ABCD"[i % 4], "因为"] for i in range(6)]
    base = root / "ceval" / "formal_ceval"
    for split in ("dev", "val"):
        _csv(base / split / f"{name}_{split}.csv", recs, header)
    _csv(base / "test" / f"{name}_test.csv", [r[:6] for r in recs], header[:6])


def _cmmlu(root: Path) -> None:
    name = "agronomy"
    header = ["", "Question", "A", "B", "C", "D", "Answer"]
    recs = [[str(i), f"[q{i}] 农学问题 {i}", "甲", "乙", "丙", "丁", "ABCD"[i % 4]] for i in range(6)]
    for split in ("dev", "test"):
        _csv(root / "cmmlu" / split / f"{name}.csv", recs, header)


def _arc(root: Path, folder: str, stem: str) -> None:
    def rows(off: int) -> list[dict]:
        return [{"id": str(i), "question": {"stem": f"[q{off + i}] Which one {i}?", "choices": [
            {"label": lab, "text": t} for lab, t in zip("ABCD", ("wood", "iron", "glass", "water"))]},
            "answerKey": "ABCD"[i % 4]} for i in range(6)]
    _jsonl(root / "ARC" / folder / f"{stem}-Dev.jsonl", rows(90))
    _jsonl(root / "ARC" / folder / f"{stem}-Test.jsonl", rows(0))


BBH_BOOL = [("[q0] not ( True ) and ( True ) is", "False"), ("[q1] True and not not ( not False ) is", "True"),
            ("[q2] not True or ( False and True ) is", "False"), ("[q3] False or not ( True ) and False is", "False"),
            ("[q4] True and True and not False is", "True"), ("[q5] not not ( False ) or True is", "True"),
            ("[q6] ( True ) and not True is", "False"), ("[q7] False or ( True or False ) is", "True")]
BBH_MCQ = [(f"[q{10 + i}] Which sentence has the correct adjective order?\nOptions:\n(A) old red car\n(B) red old car",
            "(A)" if i % 2 == 0 else "(B)") for i in range(4)]


def _bbh(root: Path) -> None:
    for name, ex in (("boolean_expressions", BBH_BOOL), ("hyperbaton", BBH_MCQ)):
        p = root / "BBH" / "data" / f"{name}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({"examples": [{"input": i, "target": t} for i, t in ex]}), encoding="utf-8")


def _gpqa(root: Path) -> None:
    header = [f"c{i}" for i in range(7)] + ["Question", "Correct Answer", "Incorrect Answer 1",
                                            "Incorrect Answer 2", "Incorrect Answer 3"]
    recs = [[*([""] * 7), f"[q{i}] Which particle {i}?", f"right{i}", f"wrong{i}a", f"wrong{i}b", f"wrong{i}c"]
            for i in range(8)]
    _csv(root / "gpqa" / "gpqa_diamond.csv", recs, header)


MATH = [("[q0] What is $1+1$?", "We add: $1+1=2$. So $\\boxed{2}$.", "2"),
        ("[q1] Simplify $\\frac{4}{8}$.", "Divide: $\\boxed{\\frac{1}{2}}$", "\\frac{1}{2}"),
        ("[q2] What is $3^2$?", "Square it: $\\boxed{9}$", "9"),
        ("[q3] Solve $x+1=4$.", "Subtract one: $x=\\boxed{3}$", "3"),
        ("[q4] What is $\\sqrt{16}$?", "It is $\\boxed{4}$.", "4")]


def _math(root: Path) -> None:
    _jsonl(root / "math" / "test_prm800k_500.jsonl",
           [{"problem": p, "solution": s, "answer": a, "subject": "Algebra", "level": 1, "unique_id": str(i)}
            for i, (p, s, a) in enumerate(MATH)])


MTBENCH = [{"question_id": 81, "category": "writing", "prompt": ["[q0] Write a haiku.", "[q1] Now in French."]},
           {"question_id": 82, "category": "math", "prompt": ["[q2] What is 2+2?", "[q3] And times 3?"],
            "reference": ["4", "12"]},
           {"question_id": 83, "category": "roleplay", "prompt": ["[q4] Pretend to sneeze."],
            "reference": ["sneeze"]}]


def _mtbench(root: Path) -> None:
    _jsonl(root / "mtbench" / "question.jsonl", MTBENCH)


TEXTVQA = [("[q0] what brand is shown?", ["nokia"] * 7 + ["nokla"] * 3),
           ("[q1] what number is on the shirt?", ["23"] * 10),
           ("[q2] what does the sign say?", ["stop"] * 4 + ["stop sign"] * 6),
           ("[q3] what color is the car?", ["red"] * 2 + ["dark red"] * 8)]


def _textvqa(root: Path) -> None:
    d = root / "textvqa" / "textvqa_json"
    images = root / "textvqa" / "train_images"
    images.mkdir(parents=True, exist_ok=True)
    rows, ann = [], []
    for i, (q, answers) in enumerate(TEXTVQA):
        img = images / f"img{i}.png"
        img.write_bytes(png(rgb=(10 * i, 30, 200)))
        rows.append({"question_id": 100 + i, "question": q, "image": str(img)})
        ann.append({"question_id": 100 + i, "answers": [{"answer": a, "answer_id": k + 1}
                                                         for k, a in enumerate(answers)]})
    _jsonl(d / "textvqa_val.jsonl", rows)
    (d / "textvqa_val_annotations.json").write_text(json.dumps({"annotations": ann}), encoding="utf-8")


CUSTOM_QA = [("[q0] Capital of France?", "Paris", 16), ("[q1] 2+2?", "4", None), ("[q2] Colour of the sky?", "blue", 32),
             ("[q3] Opposite of hot?", "cold", 0), ("[q4] First letter?", "A", 16)]


# AIME 2025 judged: the candidate's reply ends in a [q1N] marker, which the judge prompt quotes last, so the
# stand-in gives the judge's verdict for row N from the same table
AIME = [(f"[q{i}] Find the sum of all bases b > {i} for which 17_b divides 97_b.", str(70 + i)) for i in range(10)]


def _aime2025(root: Path) -> None:
    _jsonl(root / "aime2025" / "aime2025.jsonl", [{"question": q, "answer": a} for q, a in AIME])


AIME_REPLIES = {**{i: f"The answer is \\boxed{{{70 + i if i % 3 else 1}}} [q{10 + i}]" for i in range(10)},
                # verdicts: get_a_or_b reads only the last character
                10: "B", 11: "A", 12: "A", 13: "B", 14: "A", 15: "A", 16: "B", 17: "The answer is A", 18: "A.",
                19: "A"}


IFEVAL_ROWS = [
    ("punctuation:no_comma", {}), ("detectable_format:title", {}),
    ("keywords:existence", {"keywords": ["apple"]}), ("length_constraints:number_words",
                                                      {"relation": "at least", "num_words": 6}),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}), ("startend:end_checker",
                                                                    {"end_phrase": "Any other questions?"}),
]


def _ifeval(root: Path) -> None:
    rows = []
    for i, (iid, kw) in enumerate(IFEVAL_ROWS):
        full = {"num_words": None, "relation": None, "keywords": None, "num_bullets": None, "end_phrase": None, **kw}
        rows.append({"key": 1000 + i, "prompt": f"[q{i}] Write about fruit.", "instruction_id_list": [iid],
                     "kwargs": [full]})
    _jsonl(root / "ifeval" / "input_data.jsonl", rows)


def _siqa(root: Path) -> None:
    base = root / "siqa"
    for stem, off in (("train", 90), ("dev", 0)):
        recs = [{"context": f"[q{off + i}] Tracy went home.", "question": "Why?", "answerA": "to sleep",
                 "answerB": "to eat dinner", "answerC": "to go to work"} for i in range(6)]
        _jsonl(base / f"{stem}.jsonl", recs)
        (base / f"{stem}-labels.lst").write_text("".join(f"{1 + i % 3}\n" for i in range(6)), encoding="utf-8")


REALWORLDQA = [("[q0] Which way does the road turn?", "Left"), ("[q1] How many cars are there?", "3"),
               ("[q2] Is the light red?", "No"), ("[q3] What colour is the sign?", "Blue")]


def _realworldqa(root: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = root / "RealworldQA" / "data"
    d.mkdir(parents=True, exist_ok=True)
    rows = [{"question": q, "answer": a, "image": {"bytes": png(rgb=(40 * i, 90, 10)), "path": f"{i}.png"}}
            for i, (q, a) in enumerate(REALWORLDQA)]
    pq.write_table(pa.Table.from_pylist(rows[:2]), d / "test-00000-of-00002.parquet")
    pq.write_table(pa.Table.from_pylist(rows[2:]), d / "test-00001-of-00002.parquet")


# HLE judged: the candidate's reply carries a [q1N] marker the judge prompt quotes, and the judge answers in the
# JSON its response_format asks for
HLE = [(f"[q{i}] What is the {i}th prime?", str([2, 3, 5, 7, 11, 13][i])) for i in range(6)]


def _hle_verdict(correct: str, confidence: int) -> str:
    return json.dumps({"extracted_final_answer": "x", "reasoning": "r", "correct": correct,
                       "confidence": confidence, "strict": True})


HLE_REPLIES = {**{i: f"Explanation: it is.\nAnswer: {i} [q{10 + i}]\nConfidence: 80%" for i in range(6)},
               10: _hle_verdict("yes", 90), 11: _hle_verdict("no", 70), 12: "not json",
               13: _hle_verdict("yes", 100), 14: _hle_verdict("no", 20), 15: _hle_verdict("yes", 60)}


def _hle(root: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = root / "hle" / "data"
    d.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([{"id": str(i), "question": q, "answer": a, "image": ""}
                                         for i, (q, a) in enumerate(HLE)]), d / "test-00000-of-00001.parquet")


def _longbench_v2(root: Path) -> None:
    recs = [{"_id": str(i), "domain": "d", "question": f"[q{i}] Which one?", "context": "A long text. " * 20,
             "answer": "ABCD"[i % 4], "choice_A": "a", "choice_B": "b", "choice_C": "c", "choice_D": "d",
             "difficulty": ("easy", "hard")[i % 2], "length": ("short", "medium", "long")[i % 3]} for i in range(6)]
    p = root / "LongBench-v2" / "data.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(recs), encoding="utf-8")


def _custom_qa(root: Path) -> None:
    # AISBench's custom loader reads a row's max_tokens as its max_out_len (empty: the model's)
    _jsonl(root / "custom" / "qa.jsonl", [{"question": q, "answer": a, **({} if n is None else {"max_tokens": n})}
                                          for q, a, n in CUSTOM_QA])


# -- the cases ------------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    module: str  # dataset config module under ais_bench.benchmark.configs.datasets
    var: str  # its list of datasets
    data: Callable[[Path], None]
    replies: dict[int, str]
    select: str | None = None  # an expression over ``var`` picking the datasets run
    model: str = "vllm_api_general_chat"
    default: str = "I do not know."
    abbrs: list[str] = field(default_factory=list)
    thinking: str | None = None  # a reasoning model's reasoning_content, sent beside every chat reply
    judged: bool = False  # the datasets' judge_infer_cfg judge model served by the same stand-in

    def server(self) -> StubServer:
        """The stand-in server answering this case."""
        return StubServer(answer=self.answer, reasoning=None if self.thinking is None else (lambda b: self.thinking))

    def answer(self, body: dict) -> str:
        text = json.dumps(body.get("messages") or body.get("prompt"), ensure_ascii=False)
        found = MARK.findall(text)
        return self.replies.get(int(found[-1]), self.default) if found else self.default

    def config(self, port: int) -> str:
        return (f"from mmengine.config import read_base\n\nwith read_base():\n"
                f"    from {MODELS}.{self.model} import models\n"
                f"    from {DATASETS}.{self.module} import {self.var}\n"
                "    from ais_bench.benchmark.configs.summarizers.example import summarizer\n\n"
                f"datasets = {self.select or self.var}\n"
                "models[0]['host_ip'] = '127.0.0.1'\n"
                f"models[0]['host_port'] = {port}\n"
                "models[0]['model'] = 'served'\n"
                "models[0]['batch_size'] = 4\n"
                + ("datasets[0]['judge_infer_cfg']['judge_model']['host_ip'] = '127.0.0.1'\n"
                   f"datasets[0]['judge_infer_cfg']['judge_model']['host_port'] = {port}\n"
                   "datasets[0]['judge_infer_cfg']['judge_model']['model'] = 'judge'\n" if self.judged else ""))


def _only(var: str, *abbrs: str) -> str:
    return f"[d for d in {var} if d['abbr'] in {list(abbrs)!r}]"


CASES = [
    Case("gsm8k", "gsm8k.gsm8k_gen_4_shot_cot_chat_prompt", "gsm8k_datasets", _gsm8k,
         {0: "0 + 2 = 2. The answer is 2", 1: "The answer is 4", 2: "So we get 4.\nThe answer is 4",
          3: "3+2 is 5, so 5", 4: "I think 7", 5: "The answer is 1,0"}, abbrs=["gsm8k"]),
    # the chat prompt's rounds sent to a completions model: joined as text, as AISBench's LM template parser does
    Case("gsm8k_completions", "gsm8k.gsm8k_gen_4_shot_cot_chat_prompt", "gsm8k_datasets", _gsm8k,
         {0: "The answer is 2", 1: "4", 2: "The answer is 3"}, model="vllm_api_general", abbrs=["gsm8k"]),
    Case("mmlu", "mmlu.mmlu_gen_5_shot_str", "mmlu_datasets", _mmlu,
         {0: "A", 1: " B", 2: "(D)", 3: "D. z", 4: "I'd say C", 5: "b"},
         select=_only("mmlu_datasets", "lukaemon_mmlu_abstract_algebra"), abbrs=["lukaemon_mmlu_abstract_algebra"]),
    Case("ceval", "ceval.ceval_gen_0_shot_str", "ceval_datasets", _ceval,
         {0: "A", 1: " B. 乙", 2: "答案是 D", 3: "D", 4: "选 A", 5: "cB"},
         select=_only("ceval_datasets", "ceval-computer_network"), model="vllm_api_general",
         abbrs=["ceval-computer_network"]),
    Case("cmmlu", "cmmlu.cmmlu_gen_0_shot_cot_chat_prompt", "cmmlu_datasets", _cmmlu,
         {0: "分析……\n答案: A", 1: "答案：B", 2: "答案: (C)", 3: "答案: D", 4: "答案: B", 5: "不知道"},
         select=_only("cmmlu_datasets", "cmmlu-agronomy"), abbrs=["cmmlu-agronomy"]),
    Case("arc_c", "ARC_c.ARC_c_gen_0_shot_chat_prompt", "ARC_c_datasets", lambda r: _arc(r, "ARC-c", "ARC-Challenge"),
         {0: "A", 1: "Not A. The answer is B", 2: "C: glass", 3: "A", 4: "(A) wood", 5: "B"}, abbrs=["ARC-c"]),
    Case("arc_e", "ARC_e.ARC_e_gen_0_shot_chat_prompt", "ARC_e_datasets", lambda r: _arc(r, "ARC-e", "ARC-Easy"),
         {0: "A", 1: "B", 2: "The answer is C", 3: "D", 4: "B", 5: "none"}, abbrs=["ARC-e"]),
    Case("bbh", "bbh.bbh_gen_3_shot_cot_chat", "bbh_datasets", _bbh,
         {0: "Let's think. So the answer is False.", 1: "So the answer is: True", 2: "So the answer is **False**.",
          3: "the answer is false", 4: "So the answer is True.\nDone", 5: "So the answer is True, clearly",
          6: "So the answer is False", 7: "So the answer is True",
          10: "So the answer is (A).", 11: "So the answer is (A).", 12: "the answer is A", 13: "So the answer is (B)"},
         select=_only("bbh_datasets", "bbh-boolean_expressions", "bbh-hyperbaton"),
         abbrs=["bbh-boolean_expressions", "bbh-hyperbaton"]),
    Case("gpqa", "gpqa.gpqa_gen_0_shot_cot_chat_prompt", "gpqa_datasets", _gpqa,
         {0: "Answer: A", 1: "Thinking...\nANSWER: D", 2: "answer : c", 3: "Answer: B", 4: "The answer is A",
          5: "Answer: C", 6: "Answer: (D)", 7: "Answer:A"}, abbrs=["GPQA_diamond"]),
    Case("math500", "math.math500_gen_0_shot_cot_chat_prompt", "math_datasets", _math,
         {0: "So the answer is $\\boxed{2}$.", 1: "$\\boxed{0.5}$", 2: "The result is 9", 3: "$\\boxed{x=3}$",
          4: "\\boxed{5}"}, abbrs=["math_prm800k_500"]),
    Case("mtbench", "mtbench.mtbench_gen", "mtbench_datasets", _mtbench,
         {0: "Leaves fall", 1: "Les feuilles tombent", 2: "4", 3: "12", 4: "E"}, abbrs=["mtbench"]),
    # the history holds the reference answers instead of the model's replies
    Case("mtbench_gt", "mtbench.mtbench_gen", "mtbench_datasets", _mtbench,
         {0: "Leaves fall", 1: "Les feuilles tombent", 2: "5", 3: "12", 4: "E"},
         select="[dict(d, infer_cfg=dict(d['infer_cfg'], inferencer=dict(d['infer_cfg']['inferencer'], "
                "infer_mode='every_with_gt'))) for d in mtbench_datasets]", abbrs=["mtbench"]),
    Case("textvqa", "textvqa.textvqa_gen_base64", "textvqa_datasets", _textvqa,
         {0: "Nokia.", 1: "twenty three", 2: "Stop", 3: "dark red"}, abbrs=["textvqa"]),
    # rows that set their own max_out_len (a custom dataset's max_tokens column): sent per request
    Case("custom_qa", "custom.custom_qa_gen", "custom_datasets", _custom_qa,
         {0: "Paris", 1: "4", 2: "grey", 3: "cold", 4: "B"}, abbrs=["qa"]),
    # streaming service models: the same bodies with stream=true (+ stream_options), the reply read as events
    Case("gsm8k_stream", "gsm8k.gsm8k_gen_4_shot_cot_chat_prompt", "gsm8k_datasets", _gsm8k,
         {0: "0 + 2 = 2. The answer is 2", 1: "The answer is 4", 2: "So we get 4.\nThe answer is 4",
          3: "3+2 is 5, so 5", 4: "I think 7", 5: "The answer is 1,0"}, model="vllm_api_stream_chat",
         abbrs=["gsm8k"]),
    Case("ceval_stream", "ceval.ceval_gen_0_shot_str", "ceval_datasets", _ceval,
         {0: "A", 1: " B. 乙", 2: "答案是 D", 3: "D", 4: "选 A", 5: "cB"},
         select=_only("ceval_datasets", "ceval-computer_network"), model="vllm_api_general_stream",
         abbrs=["ceval-computer_network"]),
    # a reasoning model, streamed: AISBench predicts reasoning</think>content, and its model config's
    # extract_non_reasoning_content keeps the content; with no content the reasoning is the prediction (q5)
    Case("gsm8k_stream_reasoning", "gsm8k.gsm8k_gen_4_shot_cot_chat_prompt", "gsm8k_datasets", _gsm8k,
         {0: "0 + 2 = 2. The answer is 2", 1: "The answer is 4", 2: "So we get 4.\nThe answer is 4",
          3: "3+2 is 5, so 5", 4: "I think 7", 5: ""}, model="vllm_api_stream_chat",
         abbrs=["gsm8k"], thinking="Let me think. The answer is 7"),
    Case("mtbench_stream", "mtbench.mtbench_gen", "mtbench_datasets", _mtbench,
         {0: "Leaves  fall\n softly", 1: "Les feuilles tombent", 2: "4", 3: "12", 4: "E"},
         model="vllm_api_stream_chat_multiturn", abbrs=["mtbench"]),
    # an LLM-judged config: the candidate's replies sent to the judge (its own prompt, system turn and model
    # settings), the judge's replies through get_a_or_b and LLMJudgeCorrectEvaluator: <abbr>-judge
    # AISBench's own rules, native: IFEval's instruction checks, SIQA's nearest candidate by edit distance
    Case("ifeval", "ifeval.ifeval_0_shot_gen_str", "ifeval_datasets", _ifeval,
         {0: "No commas here", 1: "<<Fruit>>\nApples", 2: "An Apple a day", 3: "Too short", 4: "* a\n* b",
          5: "Fruit is good. Any other questions?"}, abbrs=["ifeval"]),
    Case("siqa", "siqa.siqa_gen_0_shot_chat", "siqa_datasets", _siqa,
         {0: "A", 1: "B. to eat dinner", 2: "to go to work", 3: "C", 4: "I think to sleep", 5: "none"},
         abbrs=["siqa"]),
    Case("realworldqa", "realworldqa.realworldqa_gen_base64", "realworldqa_datasets", _realworldqa,
         {0: "The road bends.\nANSWER: left", 1: "ANSWER: 4", 2: "answer: no", 3: "It is blue.\nANSWER: Blue"},
         abbrs=["realworldqa"]),
    Case("longbench_v2", "longbenchv2.longbenchv2_gen_75fbba", "LongBenchv2_datasets", _longbench_v2,
         {0: "The correct answer is (A)", 1: "The correct answer is (B)", 2: "(A)", 3: "D", 4: "answer A",
          5: "The correct answer is (C)"}, abbrs=["LongBenchv2"]),
    Case("hle_llmjudge", "hle.hle_llmjudge", "hle_datasets", _hle, HLE_REPLIES, abbrs=["hle-judge"],
         judged=True),
    Case("aime2025_llmjudge", "aime2025.aime2025_gen_0_shot_llmjudge", "aime2025_datasets", _aime2025,
         AIME_REPLIES, abbrs=["aime2025-judge"], judged=True),
]
BY_NAME = {c.name: c for c in CASES}


# -- runs ---------------------------------------------------------------------------------------------------


def setup_case(case: Case, tmp: Path, port: int) -> tuple[Path, Path]:
    cache = tmp / "cache"
    case.data(cache / "ais_bench" / "datasets")
    cfg = tmp / f"eval_{case.name}.py"
    cfg.write_text(case.config(port), encoding="utf-8")
    return cfg, cache


def _requests(log: list[dict]) -> list[str]:
    return sorted(request_hash(e["path"], e["body"]) for e in log if e.get("attempt", 1) == 1)


def _bodies(log: list[dict]) -> dict[str, Any]:
    """Each first-attempt request by its hash (to show what differs when two runs disagree)."""
    return {request_hash(e["path"], e["body"]): [e["path"], e["body"]] for e in log if e.get("attempt", 1) == 1}


def run_promptweave(case: Case, tmp: Path) -> dict[str, Any]:
    """promptweave's scores and request hashes for one case (in this process, as the CLI)."""
    from typer.testing import CliRunner

    from promptweave.cli.app import app

    with case.server() as server:
        cfg, cache = setup_case(case, tmp, server.port)
        old = os.environ.get("AIS_BENCH_DATASETS_CACHE")
        os.environ["AIS_BENCH_DATASETS_CACHE"] = str(cache)
        try:
            res = CliRunner().invoke(app, ["run", str(cfg), "-w", str(tmp / "work"), "--no-progress"])
        finally:
            if old is None:
                os.environ.pop("AIS_BENCH_DATASETS_CACHE", None)
            else:
                os.environ["AIS_BENCH_DATASETS_CACHE"] = old
        log = list(server.log)
    return {"exit_code": res.exit_code, "output": res.output, "scores": _promptweave_scores(case, tmp / "work"),
            "requests": _requests(log), "bodies": _bodies(log)}


def _promptweave_scores(case: Case, work: Path) -> dict[str, Any]:
    scores: dict[str, Any] = {}
    for abbr in case.abbrs:
        found = list((work / "results").glob(f"*/{abbr}.json"))
        if found:
            scores[abbr] = json.loads(found[0].read_text(encoding="utf-8")).get("metrics")
    return scores


SRC = HERE.parents[1] / "src"


def venv_runs_promptweave(venv: Path) -> str | None:
    """None when ``venv``'s interpreter can run this tree's promptweave (its runtime dependencies are there), else
    what is missing."""
    probe = ("import importlib.util as u; print(' '.join(m for m in ('yaml', 'pydantic', 'typer', 'rich', 'jinja2', "
             "'regex', 'numpy') if u.find_spec(m) is None))")
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=120)
    missing = proc.stdout.strip() if proc.returncode == 0 else proc.stderr.strip()[-200:]
    return missing or None


def run_promptweave_in(case: Case, tmp: Path, venv: Path) -> dict[str, Any]:
    """promptweave (this tree's, ``src`` first on the path) run by ``venv``'s interpreter, as its CLI: the
    environment AISBench users have (ais_bench installed with its dependencies, numpy 1.26, torch CPU)."""
    with case.server() as server:
        cfg, cache = setup_case(case, tmp, server.port)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(AIS_BENCH_DATASETS_CACHE=str(cache), PYTHONPATH=str(SRC), HF_HUB_OFFLINE="1",
                   HF_DATASETS_OFFLINE="1", NO_PROXY="127.0.0.1,localhost")
        proc = subprocess.run([str(venv / "bin" / "python"), "-m", "promptweave", "run", str(cfg), "-w",
                               str(tmp / "work"), "--no-progress"], cwd=tmp, env=env, capture_output=True, text=True,
                              timeout=900)
        log = list(server.log)
    return {"exit_code": proc.returncode, "output": (proc.stdout + proc.stderr)[-4000:],
            "scores": _promptweave_scores(case, tmp / "work"), "requests": _requests(log), "bodies": _bodies(log)}


_SKIP_METRICS = {"details", "type"}


def _numeric(metrics: dict) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items() if k not in _SKIP_METRICS and isinstance(v, (int, float))
            and not isinstance(v, bool)}


def run_reference(case: Case, tmp: Path, venv: Path) -> dict[str, Any]:
    """AISBench's own CLI on the same config, data and server: its scores and the requests it sent."""
    with case.server() as server:
        cfg, cache = setup_case(case, tmp, server.port)
        work = tmp / "ref_work"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(AIS_BENCH_DATASETS_CACHE=str(cache), PATH=f"{venv / 'bin'}:{env.get('PATH', '')}",
                   HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", NO_PROXY="127.0.0.1,localhost")
        proc = subprocess.run([str(venv / "bin" / "ais_bench"), str(cfg), "--debug", "-w", str(work),
                               "--num-warmups", "0"], cwd=tmp, env=env, capture_output=True, text=True,
                              timeout=900)
        log = list(server.log)
    scores: dict[str, Any] = {}
    for abbr in case.abbrs:
        found = sorted(work.glob(f"*/results/*/{abbr}.json"))
        if found:
            scores[abbr] = _numeric(json.loads(found[-1].read_text(encoding="utf-8")))
    return {"exit_code": proc.returncode, "output": (proc.stdout + proc.stderr)[-4000:], "scores": scores,
            "requests": _requests(log), "bodies": _bodies(log)}


def load_fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}


def record(names: list[str]) -> None:  # pragma: no cover - run by hand with the reference venv
    import tempfile

    venv = reference_venv()
    if venv is None:
        raise SystemExit("no reference venv: set PROMPTWEAVE_AIS_FULL_VENV (tools/build_reference_venvs.sh builds .venvs/ais-full)")
    out = load_fixture()
    for name in names or list(BY_NAME):
        with tempfile.TemporaryDirectory() as tmp:
            got = run_reference(BY_NAME[name], Path(tmp), venv)
        print(name, got["exit_code"], got["scores"], len(got["requests"]), "requests", flush=True)
        if got["exit_code"] != 0 or not got["scores"]:
            print(got["output"], flush=True)
            continue
        out[name] = {"scores": got["scores"], "requests": dict(Counter(got["requests"]))}
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    record(sys.argv[1:])
