"""Yes/no, NLI and few-shot multiple-choice OpenCompass configs end to end: BoolQ, CMNLI, CommonsenseQA (FixK
8-shot from train), PIQA (labels in a separate .lst file)."""
from __future__ import annotations

import json

import pytest
from openai_stub import StubServer

from tests.data import layouts
from tests.e2e.harness import by_marker, predictions, result, run_config


def _run(tmp_path, module, name, replies):
    with StubServer(answer=by_marker(replies)) as server:
        res, work = run_config(tmp_path, server.url, module, name)
    assert res.exit_code == 0, res.output
    return work


def _acc(gold, said):
    return 100 * sum(g == s for g, s in zip(gold, said)) / len(gold)


def test_boolq_gen(tmp_path, cache):
    labels = ["true", "false", "true", "false"]
    said = ["A", "B", "B", "B"]  # the config's prompt offers A. Yes / B. No
    layouts.plain_jsonl(cache, "data/SuperGLUE/BoolQ/val.jsonl",
                        [{"question": f"[q{i}] is it?", "passage": "p", "label": lab} for i, lab in enumerate(labels)])
    work = _run(tmp_path, "SuperGLUE_BoolQ.SuperGLUE_BoolQ_gen_883d50", "BoolQ_datasets",
                {i: s for i, s in enumerate(said)})
    gold = [{"true": "A", "false": "B"}[lab] for lab in labels]
    assert result(work, "BoolQ")["metrics"]["accuracy"] == pytest.approx(_acc(gold, said))


def test_cmnli_gen_drops_unlabelled_rows(tmp_path, cache):
    rows = [("entailment", "A"), ("-", None), ("neutral", "B"), ("contradiction", "B")]
    layouts.plain_jsonl(cache, "data/CLUE/cmnli/cmnli_public/dev.json",
                        [{"sentence1": f"[q{i}] s1", "sentence2": "s2", "label": lab} for i, (lab, _) in
                         enumerate(rows)])
    replies = {i: s for i, (_, s) in enumerate(rows) if s}
    work = _run(tmp_path, "CLUE_cmnli.CLUE_cmnli_gen_1abf97", "cmnli_datasets", replies)
    gold = [{"entailment": "A", "contradiction": "B", "neutral": "C"}[lab] for lab, _ in rows if lab != "-"]
    said = [s for _, s in rows if s]
    got = result(work, "cmnli")
    assert got["metrics"]["accuracy"] == pytest.approx(_acc(gold, said))
    assert len(predictions(work, "cmnli")) == 3


def test_commonsenseqa_gen_fixk_shots_from_train(tmp_path, cache):
    def item(i, key):
        return {"question": {"stem": f"[q{i}] Where?", "choices": [{"label": c, "text": f"{c.lower()}{i}"}
                                                                  for c in "ABCDE"]}, "answerKey": key}

    layouts.plain_jsonl(cache, "data/commonsenseqa/train_rand_split.jsonl", [item(100 + i, "E") for i in range(8)])
    gold, said = ["A", "E", "C"], ["A", "E", "D"]
    layouts.plain_jsonl(cache, "data/commonsenseqa/dev_rand_split.jsonl", [item(i, g) for i, g in enumerate(gold)])
    work = _run(tmp_path, "commonsenseqa.commonsenseqa_gen_1da2d0", "commonsenseqa_datasets",
                {i: s for i, s in enumerate(said)})
    assert result(work, "commonsense_qa")["metrics"]["accuracy"] == pytest.approx(_acc(gold, said))
    first = json.dumps(predictions(work, "commonsense_qa")[0], ensure_ascii=False)
    assert all(f"[q{100 + i}]" in first for i in range(8))  # the 8 fixed in-context examples from train


def test_piqa_gen_labels_from_lst(tmp_path, cache):
    d = cache / "data" / "piqa"
    labels = [0, 1, 1]
    said = ["A", "B", "A"]
    for stem in ("train", "dev"):
        layouts.plain_jsonl(cache, f"data/piqa/{stem}.jsonl",
                            [{"id": f"x{i}", "goal": f"[q{i}] goal", "sol1": "one", "sol2": "two"}
                             for i in range(len(labels))])
        (d / f"{stem}-labels.lst").write_text("".join(f"{lab}\n" for lab in labels), encoding="utf-8")
    work = _run(tmp_path, "piqa.piqa_gen_1194eb", "piqa_datasets", {i: s for i, s in enumerate(said)})
    assert result(work, "piqa")["metrics"]["accuracy"] == pytest.approx(_acc(["A", "B", "B"], said))


def _wino(i: int, answer: str) -> dict:
    return {"sentence": f"[q{i}] Ann gave Bo _ book.", "option1": "her", "option2": "his", "answer": answer}


def test_winogrande_5shot_gen_fixk_from_train_xs(tmp_path, cache):
    layouts.plain_jsonl(cache, "data/winogrande/train_xs.jsonl", [_wino(100 + i, "1") for i in range(10)])
    gold = ["1", "2", "2"]
    said = ["A", "B", "A"]
    layouts.plain_jsonl(cache, "data/winogrande/dev.jsonl", [_wino(i, g) for i, g in enumerate(gold)])
    work = _run(tmp_path, "winogrande.winogrande_5shot_gen_b36770", "winogrande_datasets",
                {i: s for i, s in enumerate(said)})
    assert result(work, "winogrande")["metrics"]["accuracy"] == pytest.approx(_acc(["A", "B", "B"], said))
    first = json.dumps(predictions(work, "winogrande")[0])
    assert all(f"[q{100 + k}]" in first for k in (0, 2, 4, 6, 8)) and "[q101]" not in first


def test_openbookqa_gen_two_subsets(tmp_path, cache):
    def item(i, key, fact=None):
        out = {"question": {"stem": f"[q{i}] Why?", "choices": [{"label": c, "text": c.lower()} for c in "ABCD"]},
               "answerKey": key}
        if fact:
            out["fact1"] = fact
        return out

    layouts.plain_jsonl(cache, "data/openbookqa/Main/test.jsonl", [item(0, "A"), item(1, "C")])
    layouts.plain_jsonl(cache, "data/openbookqa/Additional/test_complete.jsonl",
                        [item(10, "D", "heat rises"), item(11, "B", "ice is cold")])
    work = _run(tmp_path, "obqa.obqa_gen_9069e4", "obqa_datasets", {0: "A", 1: "B", 10: "D", 11: "B"})
    assert result(work, "openbookqa")["metrics"]["accuracy"] == pytest.approx(50.0)
    assert result(work, "openbookqa_fact")["metrics"]["accuracy"] == pytest.approx(100.0)
    assert "heat rises" in json.dumps(predictions(work, "openbookqa_fact")[0])
