"""Writers of tiny stand-in data in the references' on-disk layouts (used by loader and end-to-end tests).

Each writer takes the data cache root (what ``COMPASS_DATA_CACHE`` points at) and rows, and writes them where
and how the reference's loader reads them (folder, file names, format, columns).
"""
from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def _jsonl(path: Path, items: Iterable[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items), encoding="utf-8")
    return path


def _csv(path: Path, records: Iterable[list[str]], header: list[str] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        if header:
            w.writerow(header)
        w.writerows(records)
    return path


def gsm8k(root: Path, test: list[tuple[str, str]], train: list[tuple[str, str]] | None = None) -> None:
    """data/gsm8k/{train,test}.jsonl with question / answer ("... #### N")."""
    d = root / "data" / "gsm8k"
    for split, items in (("train", train or test[:1]), ("test", test)):
        _jsonl(d / f"{split}.jsonl", ({"question": q, "answer": a} for q, a in items))


def mmlu(root: Path, name: str, test: list[list[str]], dev: list[list[str]] | None = None) -> None:
    """data/mmlu/{dev,test}/<name>_<split>.csv, no header: question, A, B, C, D, answer."""
    for split, recs in (("dev", dev or test[:1]), ("test", test)):
        _csv(root / "data" / "mmlu" / split / f"{name}_{split}.csv", recs)


def cmmlu(root: Path, name: str, test: list[list[str]], dev: list[list[str]] | None = None) -> None:
    """data/cmmlu/{dev,test}/<name>.csv with a header: (index), Question, A-D, Answer."""
    header = ["", "Question", "A", "B", "C", "D", "Answer"]
    for split, recs in (("dev", dev or test[:1]), ("test", test)):
        _csv(root / "data" / "cmmlu" / split / f"{name}.csv", ([str(i), *r] for i, r in enumerate(recs)), header)


def ceval(root: Path, name: str, val: list[list[str]]) -> None:
    """data/ceval/formal_ceval/{dev,val,test}/<name>_<split>.csv with a header."""
    header = ["id", "question", "A", "B", "C", "D", "answer", "explanation"]
    base = root / "data" / "ceval" / "formal_ceval"
    for split in ("dev", "val", "test"):
        recs = [[str(i), *r, "because"] for i, r in enumerate(val)]
        if split == "test":
            recs = [r[:6] for r in recs]
            _csv(base / split / f"{name}_{split}.csv", recs, header[:6])
        else:
            _csv(base / split / f"{name}_{split}.csv", recs, header)


def bbh(root: Path, name: str, examples: list[tuple[str, str]]) -> None:
    """data/BBH/data/<name>.json: {"examples": [{input, target}]}."""
    p = root / "data" / "BBH" / "data" / f"{name}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"examples": [{"input": i, "target": t} for i, t in examples]}), encoding="utf-8")


def math(root: Path, problems: list[tuple[str, str]]) -> None:
    """data/math/math.json: {id: {problem, solution}} (the solution holds a \\boxed{} answer)."""
    p = root / "data" / "math" / "math.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({str(i): {"problem": q, "solution": s, "level": "Level 1"}
                             for i, (q, s) in enumerate(problems)}), encoding="utf-8")


def arc(root: Path, rel: str, items: list[tuple[str, list[str], str]]) -> None:
    """An ARC JSONL file: {question: {stem, choices: [{label, text}]}, answerKey}."""
    _jsonl(root / rel, ({"id": str(i), "question": {"stem": q, "choices": [{"label": lab, "text": t} for lab, t
                                                                       in zip("ABCD", opts, strict=False)]},
                         "answerKey": key} for i, (q, opts, key) in enumerate(items)))


def race(root: Path, name: str, items: list[tuple[str, str, list[str], str]]) -> None:
    """data/race/{validation,test}/<name>.jsonl: article, question, options, answer."""
    for split in ("validation", "test"):
        _jsonl(root / "data" / "race" / split / f"{name}.jsonl",
               ({"article": a, "question": q, "options": o, "answer": ans} for a, q, o, ans in items))


def gpqa(root: Path, name: str, items: list[tuple[str, str, str, str, str]]) -> None:
    """data/gpqa/<name>: the GPQA CSV (question in column 7, the correct answer first in columns 8-11)."""
    header = [f"c{i}" for i in range(7)] + ["Question", "Correct Answer", "Incorrect Answer 1",
                                            "Incorrect Answer 2", "Incorrect Answer 3"]
    _csv(root / "data" / "gpqa" / name, ([*([""] * 7), *it] for it in items), header)


def hellaswag(root: Path, items: list[tuple[str, list[str], int]]) -> None:
    """data/hellaswag/hellaswag.jsonl: query ("domain: ctx: text"), choices, gold."""
    _jsonl(root / "data" / "hellaswag" / "hellaswag.jsonl",
           ({"query": q, "choices": c, "gold": g} for q, c, g in items))


def plain_jsonl(root: Path, rel: str, items: list[dict]) -> None:
    _jsonl(root / rel, items)
