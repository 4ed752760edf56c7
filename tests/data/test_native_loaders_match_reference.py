"""Loaders made native for OpenCompass's users: the rows they give, checked by hand here, and equal to what
OpenCompass's own classes give on the same files where it is installed with its dependencies
(``tests/e2e/oc_full.py``; skipped with the way to build it otherwise)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptweave.data.loaders import load
from tests.e2e import oc_full


def _labelled(root: Path, rows: list[dict], labels: list[int]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for stem in ("train", "dev"):
        (root / f"{stem}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        (root / f"{stem}-labels.lst").write_text("".join(f"{x}\n" for x in labels), encoding="utf-8")


def _rows(cfg: dict, tmp_path: Path) -> dict[str, list[dict]]:
    got = load(cfg, base_dir=tmp_path, file=str(tmp_path / "cfg.py")).splits
    return {k: list(v.rows) for k, v in got.items()} if isinstance(got, dict) else {"train": list(got.rows)}


def _reference(cls: str, kwargs: dict, tmp_path: Path) -> dict[str, list[dict]]:
    return oc_full.run_reference(f"""
        import opencompass.datasets as D
        got = D.{cls}.load(**PAYLOAD)
        RESULT = {{k: [dict(r) for r in v] for k, v in got.items()}} if hasattr(got, "keys") else {{"train": [dict(r) for r in got]}}
    """, kwargs, cwd=tmp_path)


PIQA = [{"id": "a", "goal": "boil water", "sol1": "Use a pot.", "sol2": "use a sieve."},
        {"id": "b", "goal": "how to dry a shirt?", "sol1": "hang it", "sol2": "Wet it"}]
SIQA = [{"context": "Ann left.", "question": "Why?", "answerA": "tired", "answerB": "bored", "answerC": "late"}] * 3


@pytest.mark.parametrize(("cls", "data", "labels", "expect"), [
    ("PIQADataset", PIQA, [0, 1], {"goal": "boil water", "sol1": "Use a pot.", "sol2": "use a sieve.", "label": 0}),
    ("PIQADatasetV3", PIQA, [0, 1], {"goal": "Boil water", "sol1": "use a pot.", "sol2": "use a sieve.", "label": 0}),
    ("SiqaDatasetV3", SIQA, [2, 3, 1], {"context": "Ann left.", "question": "Why?", "A": "tired", "B": "bored",
                                       "C": "late", "answer": "B"}),
])
def test_labelled_choice_loaders(tmp_path, cls, data, labels, expect) -> None:
    root = tmp_path / "data"
    _labelled(root, data, labels)
    got = _rows({"type": cls, "path": str(root)}, tmp_path)
    assert sorted(got) == ["train", "validation"]
    assert got["validation"][0] == expect and list(got["validation"][0]) == list(expect)  # columns in order too
    if cls == "PIQADatasetV3":
        assert got["validation"][1]["sol1"] == "Hang it"  # a goal ending in '?' capitalises the solutions
    assert got == _reference(cls, {"path": str(root)}, tmp_path)


def test_strategyqa_keeps_the_bool_gold(tmp_path) -> None:
    f = tmp_path / "strategyQA_train.json"
    rows = [{"qid": "1", "question": "Is it?", "answer": True, "facts": ["x"]},
            {"qid": "2", "question": "Is not?", "answer": False, "facts": []}]
    f.write_text(json.dumps(rows), encoding="utf-8")
    got = _rows({"type": "StrategyQADataset", "path": str(f)}, tmp_path)
    assert got["train"] == rows and got["train"][0]["answer"] is True
    assert got == _reference("StrategyQADataset", {"path": str(f)}, tmp_path)
