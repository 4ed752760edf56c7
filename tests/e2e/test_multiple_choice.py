"""Multiple-choice OpenCompass configs end to end: ARC-c, MMLU, CMMLU, C-Eval, RACE, HellaSwag, CommonsenseQA."""
from __future__ import annotations

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.e2e.harness import by_marker, predictions, result, run_config


def _accuracy(gold: list[str], said: list[str]) -> float:
    return 100 * sum(g == s for g, s in zip(gold, said)) / len(gold)


def _run(tmp_path, module, name, select, replies):
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, module, name, select)
    assert res.exit_code == 0, res.output
    return work


def test_arc_c_gen(tmp_path, cache):
    gold = ["A", "C", "D", "B", "C"]
    said = ["A", "C", "B", "B", "A"]
    layouts.arc(cache, "data/ARC/ARC-c/ARC-Challenge-Dev.jsonl",
                [(f"[q{i}] Which one?", ["w", "x", "y", "z"], g) for i, g in enumerate(gold)]
                + [("[q99] three choices only", ["a", "b", "c"], "A")])
    work = _run(tmp_path, "ARC_c.ARC_c_gen_1e0de5", "ARC_c_datasets", None,
                {i: f"The answer is {s}." for i, s in enumerate(said)})
    got = result(work, "ARC-c")
    assert got["metrics"]["accuracy"] == pytest.approx(_accuracy(gold, said))


def _mc_rows(start: int, n: int, gold: list[str]) -> list[list[str]]:
    return [[f"[q{start + i}] Question {start + i}?", "w", "x", "y", "z", gold[i % len(gold)]] for i in range(n)]


def test_mmlu_gen_5shot_fixk(tmp_path, cache):
    """mmlu_gen_4d595a: FixK 5-shot examples from dev, AccwithDetailsEvaluator, first_option_postprocess."""
    subjects = {"college_biology": (["A", "B", "C", "D"], ["A", "B", "A", "A"]),
                "college_chemistry": (["D", "D", "C"], ["D", "no idea", "C"])}
    replies, expected = {}, {}
    for k, (name, (gold, said)) in enumerate(subjects.items()):
        base = 100 * (k + 1)
        layouts.mmlu(cache, name, _mc_rows(base, len(gold), gold), dev=_mc_rows(base + 50, 5, ["B"]))
        replies.update({base + i: f"Answer: {s}" for i, s in enumerate(said)})
        expected[f"lukaemon_mmlu_{name}"] = _accuracy(gold, said)
    work = _run(tmp_path, "mmlu.mmlu_gen_4d595a", "mmlu_datasets", "mmlu_datasets[:2]", replies)
    for abbr, acc in expected.items():
        assert result(work, abbr)["metrics"]["accuracy"] == pytest.approx(acc)
    assert not (work / "results" / "stub" / "lukaemon_mmlu_college_computer_science.json").exists()
    # the loader's columns (input, A-D, target) fill the shipped template: 5 dev examples, then the question
    hint = ("There is a single choice question about college biology. Answer the question by replying A, B, C "
            "or D.\nQuestion: [q{n}] Question {n}?\nA. w\nB. x\nC. y\nD. z\nAnswer: ")
    shots = [turn for n in range(150, 155)
             for turn in ({"role": "HUMAN", "prompt": hint.format(n=n)}, {"role": "BOT", "prompt": "B\n"})]
    first = predictions(work, "lukaemon_mmlu_college_biology")[0]
    assert first["prompt"] == [*shots, {"role": "HUMAN", "prompt": hint.format(n=100)}]


def test_cmmlu_gen(tmp_path, cache):
    gold, said = ["A", "C", "B", "D"], ["A", "C", "C", "D"]
    layouts.cmmlu(cache, "agronomy", _mc_rows(0, 4, gold), dev=_mc_rows(50, 5, ["A"]))
    work = _run(tmp_path, "cmmlu.cmmlu_gen_c13365", "cmmlu_datasets", "cmmlu_datasets[:1]",
                {i: f"答案是 {s}" for i, s in enumerate(said)})
    assert result(work, "cmmlu-agronomy")["metrics"]["accuracy"] == pytest.approx(_accuracy(gold, said))


def test_ceval_gen(tmp_path, cache):
    gold, said = ["B", "B", "A", "C", "D"], ["B", "A", "A", "C", "D"]
    layouts.ceval(cache, "computer_network", _mc_rows(0, 5, gold))
    work = _run(tmp_path, "ceval.ceval_gen_5f30c7", "ceval_datasets", "ceval_datasets[:1]",
                {i: f"{s}" for i, s in enumerate(said)})
    assert result(work, "ceval-computer_network")["metrics"]["accuracy"] == pytest.approx(_accuracy(gold, said))


def test_race_gen_both_subsets(tmp_path, cache):
    gold = ["A", "B", "C", "D"]
    said = ["A", "B", "D", "D"]
    layouts.race(cache, "middle", [("Story.", f"[q{i}] Why?", ["a", "b", "c", "d"], g) for i, g in enumerate(gold)])
    layouts.race(cache, "high", [("Essay.", f"[q{10 + i}] How?", ["a", "b", "c", "d"], g)
                                 for i, g in enumerate(gold[:2])])
    replies = {**{i: f"{s}" for i, s in enumerate(said)}, 10: "A", 11: "A"}
    work = _run(tmp_path, "race.race_gen_69ee4f", "race_datasets", None, replies)
    assert result(work, "race-middle")["metrics"]["accuracy"] == pytest.approx(_accuracy(gold, said))
    assert result(work, "race-high")["metrics"]["accuracy"] == pytest.approx(50.0)


def test_hellaswag_gen(tmp_path, cache):
    gold = [0, 3, 2]
    said = ["A", "D", "B"]
    layouts.hellaswag(cache, [(f"Cooking: [q{i}] The cook", ["a", "b", "c", "d"], g) for i, g in enumerate(gold)])
    work = _run(tmp_path, "hellaswag.hellaswag_gen_6faab5", "hellaswag_datasets", None,
                {i: f"{s}" for i, s in enumerate(said)})
    assert result(work, "hellaswag")["metrics"]["accuracy"] == pytest.approx(_accuracy(["A", "D", "C"], said))
