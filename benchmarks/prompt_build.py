"""Prompt building throughput on MMLU-like workloads, against two baselines measured in the same run.

- naive: what a straightforward engine does per row (deepcopy the template, sequential ``str.replace`` per
  column, walk the meta template) - the shape of the references' code path;
- hand: hand-specialised string joining for this one template (the speed ceiling).

Run: ``python benchmarks/prompt_build.py [--rows 14000]``. Prints prompts/s and ratios.
"""
from __future__ import annotations

import argparse
import copy
import random
import time
import warnings

from promptweave.engine import DatasetSpec, ModelSpec, PromptBuilder

META = {"round": [{"role": "HUMAN", "begin": "<|im_start|>user\n", "end": "<|im_end|>\n"},
                  {"role": "BOT", "begin": "<|im_start|>assistant\n", "end": "<|im_end|>\n", "generate": True}]}
API_META = {"round": [{"role": "HUMAN", "api_role": "HUMAN"}, {"role": "BOT", "api_role": "BOT", "generate": True}]}
Q = "{question}\nA. {A}\nB. {B}\nC. {C}\nD. {D}\nAnswer:"
COLS = ["question", "A", "B", "C", "D"]


def rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(500)]
    out = []
    for _ in range(n):
        r = {c: " ".join(rng.choices(words, k=rng.randint(4, 30) if c == "question" else 3)) for c in COLS}
        r["answer"] = rng.choice("ABCD")
        out.append(r)
    return out


def gen_cfg() -> dict:
    return {"ice_template": {"type": "PromptTemplate", "ice_token": "</E>", "template": {
                "begin": "</E>", "round": [{"role": "HUMAN", "prompt": Q}, {"role": "BOT", "prompt": "{answer}"}]}},
            "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1, 2, 3, 4]},
            "inferencer": {"type": "GenInferencer"}}


def ppl_cfg() -> dict:
    return {"ice_template": {"type": "PromptTemplate", "template": {
                "round": [{"role": "HUMAN", "prompt": Q}, {"role": "BOT", "prompt": "{answer}"}]}},
            "prompt_template": {"type": "PromptTemplate", "ice_token": "</E>", "template": {
                lab: {"begin": "</E>", "round": [{"role": "HUMAN", "prompt": Q}, {"role": "BOT", "prompt": lab}]}
                for lab in "ABCD"}},
            "retriever": {"type": "FixKRetriever", "fix_id_list": [0, 1, 2, 3, 4]},
            "inferencer": {"type": "PPLInferencer"}}


def chat_cfg() -> dict:
    return {"prompt_template": {"type": "PromptTemplate", "template": {
                "round": [{"role": "HUMAN", "prompt": Q}, {"role": "BOT", "prompt": "{answer}"}]}},
            "retriever": {"type": "ZeroRetriever"}, "inferencer": {"type": "GenInferencer"}}


def engine(cfg: dict, train: list, test: list, meta: dict, kind: str) -> float:
    ds = DatasetSpec.from_config({"abbr": "b", "reader_cfg": {"input_columns": COLS, "output_column": "answer"},
                                  "infer_cfg": cfg}, train=train, test=test)
    b = PromptBuilder(ds, ModelSpec.from_config({"abbr": "m", "kind": kind, "meta_template": meta}))
    t = time.perf_counter()
    n = sum(1 for _ in b.build_all())
    return n / (time.perf_counter() - t)


# ---------------------------------------------------------------- naive baseline (the references' shape)
def naive_fill(text: str, row: dict) -> str:
    for k, v in row.items():
        text = text.replace("{" + k + "}", str(v))
    return text


def naive_render(items: list, meta: dict, gen: bool) -> str:
    roles = {r["role"]: r for r in meta["round"]}
    out, last = "", len(items) - 1
    for i, it in enumerate(items):
        r = copy.deepcopy(roles[it["role"]])
        r.update(it)
        out += r.get("begin", "")
        if gen and i == last and r.get("generate"):
            return out
        out += r.get("prompt", "") + r.get("end", "")
    return out


def naive_gen(train: list, test: list, label: str | None = None) -> float:
    tpl = [{"role": "HUMAN", "prompt": Q}, {"role": "BOT", "prompt": "{answer}"}]
    t = time.perf_counter()
    count = 0
    for row in test:
        items = []
        for i in range(5):
            for turn in copy.deepcopy(tpl):
                turn["prompt"] = naive_fill(turn["prompt"], train[i])
                items.append(turn)
        r = copy.deepcopy(row)
        r["answer"] = label if label is not None else ""
        for turn in copy.deepcopy(tpl):
            turn["prompt"] = naive_fill(turn["prompt"], r)
            items.append(turn)
        if label is None:
            items.append({"role": "BOT", "prompt": ""})
            items = items[:-2] + [items[-1]]
        naive_render(items, META, label is None)
        count += 1
    return count / (time.perf_counter() - t)


def naive_chat(test: list) -> float:
    t = time.perf_counter()
    for row in test:
        r = copy.deepcopy(row)
        r["answer"] = ""
        [{"role": "HUMAN", "prompt": naive_fill(Q, r)}]
    return len(test) / (time.perf_counter() - t)


# ---------------------------------------------------------------- hand-specialised joining
def hand_gen(train: list, test: list) -> float:
    u, a = "<|im_start|>user\n", "<|im_start|>assistant\n"
    e = "<|im_end|>\n"

    def q(r: dict) -> str:
        return f"{r['question']}\nA. {r['A']}\nB. {r['B']}\nC. {r['C']}\nD. {r['D']}\nAnswer:"

    shots = "".join(f"{u}{q(r)}{e}{a}{r['answer']}{e}" for r in train[:5])
    t = time.perf_counter()
    for r in test:
        shots + u + q(r) + e + a
    return len(test) / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=14000)
    ap.add_argument("--chat-rows", type=int, default=50000)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    train, test = rows(100, 1), rows(args.rows, 2)
    chat_test = rows(args.chat_rows, 3)

    print(f"workload                                  prompts/s   naive/s    engine÷naive  engine÷hand")
    eg = engine(gen_cfg(), train, test, META, "lm")
    ng = naive_gen(train, test)
    hg = hand_gen(train, test)
    print(f"gen, 5-shot FixK dialogue, LM meta, {args.rows} {eg:11.0f} {ng:10.0f} {eg / ng:12.1f}x {eg / hg:11.2f}")
    ep = engine(ppl_cfg(), train, test, META, "lm")
    npl = sum(naive_gen(train, test[: args.rows // 4], lab) for lab in "A") / 1
    print(f"ppl, 4 labels, 5-shot, LM meta (per prompt) {ep:9.0f} {npl:10.0f} {ep / npl:12.1f}x")
    ec = engine(chat_cfg(), [], chat_test, API_META, "api")
    nc = naive_chat(chat_test)
    print(f"chat, 0-shot, API meta, {args.chat_rows}           {ec:11.0f} {nc:10.0f} {ec / nc:12.1f}x")


if __name__ == "__main__":
    main()
