"""AISBench's own evaluators and postprocessors on fixed rows: the cases, and their recorder.

Each case names an AISBench class or function and its inputs. ``record()`` runs every case with AISBench itself,
in a venv where it is installed with its dependencies (``$PROMPTWEAVE_AIS_FULL_VENV``), and writes what it
returned to ``fixtures/aisbench_evaluators.json``; the tests compare promptweave's native versions with that
record (and, where the venv is named, with a fresh run):

    PROMPTWEAVE_AIS_FULL_VENV=/path/to/venv python -m tests.evaluate.aisbench_evaluator_cases
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "aisbench_evaluators.json"

JUDGE_REPLIES = ["A", "B", "The answer is A", "A.", "A\n", "", "b", "Grade: B", "a", "CORRECT", "AB", "BA"]

SIQA_REFS = [{"candidates": [["A. make a cake", "A", "make a cake"], ["B. go home", "B", "go home"],
                             ["C. sleep", "C", "sleep"]], "label": i % 3} for i in range(8)]
SIQA_PREDS = ["A", "B. go home", "C", "make a cake", "I think B", "sleep now", "", "A. make a cake\nBecause..."]

REALWORLDQA_PREDS = ["Step 1...\nANSWER: Left", "ANSWER:  3 ", "answer: 3", "ANSWER: B\nANSWER: C", "No idea",
                     "ANSWER: Yes.", "ANSWER:\nno"]
REALWORLDQA_REFS = ["left", "3", "3", "B", "A", "yes", "no"]


def _ifeval(key: int, ids: list[str], kwargs: list[dict], prompt: str = "Write something.") -> dict:
    # the dataset's own shape: every instruction's kwargs, the unused ones None
    return {"key": key, "prompt": prompt, "instruction_id_list": ids, "kwargs": kwargs}


IFEVAL_REFS = [
    _ifeval(1, ["punctuation:no_comma", "detectable_format:title"], [{}, {}]),
    _ifeval(2, ["keywords:existence", "keywords:forbidden_words"],
            [{"keywords": ["apple", "tree"]}, {"forbidden_words": ["pear", "banana"]}]),
    _ifeval(3, ["length_constraints:number_words", "keywords:frequency"],
            [{"relation": "at least", "num_words": 8}, {"keyword": "sun", "frequency": 2, "relation": "less than"}]),
    _ifeval(4, ["detectable_format:number_bullet_lists", "detectable_format:number_highlighted_sections"],
            [{"num_bullets": 2}, {"num_highlights": 1}]),
    _ifeval(5, ["length_constraints:number_paragraphs", "startend:end_checker"],
            [{"num_paragraphs": 2}, {"end_phrase": "Any other questions?"}]),
    _ifeval(6, ["detectable_format:json_format", "startend:quotation"], [{}, {}]),
    _ifeval(7, ["combination:repeat_prompt", "combination:two_responses"],
            [{"prompt_to_repeat": "Write something."}, {}]),
    _ifeval(8, ["detectable_content:postscript", "detectable_content:number_placeholders"],
            [{"postscript_marker": "P.S."}, {"num_placeholders": 2}]),
    _ifeval(9, ["detectable_format:multiple_sections", "keywords:letter_frequency"],
            [{"section_spliter": "Section", "num_sections": 2}, {"letter": "z", "let_frequency": 2,
                                                                  "let_relation": "at least"}]),
    _ifeval(10, ["length_constraints:nth_paragraph_first_word", "detectable_format:constrained_response"],
            [{"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "second"}, {}]),
    _ifeval(11, ["change_case:english_lowercase", "change_case:english_capital"], [{}, {}]),
    _ifeval(12, ["punctuation:no_comma"], [{"num_words": None}]),
]
IFEVAL_PREDS = [
    "<<My Title>>\nNo commas here at all",
    "An apple fell from a tree. Pear!",
    "The sun is bright and the sun is warm today okay",
    "* one\n* two\n*highlighted*",
    "*first paragraph*\n***\nsecond paragraph. Any other questions?",
    '```json\n{"a": 1}\n```',
    "Write something. First answer\n******\nSecond answer",
    "Fill [name] at [address].\np.s. bye",
    "Section 1 zebra\nSection 2 zoo",
    "First paragraph here.\n\nSecond, paragraph. My answer is yes.",
    "Hello World, Mixed Case",
    "",
]



def _hle_reply(correct: str, confidence: int) -> str:
    return json.dumps({"extracted_final_answer": "x", "reasoning": "r", "correct": correct,
                       "confidence": confidence, "strict": True}, indent=2)


HLE_SMALL = [_hle_reply("yes", 90), _hle_reply("no", 80), "not json", _hle_reply("yes", 100),
             '{"correct": "yes",\n "confidence": 55}', _hle_reply("no", 10)]
# 250 rows: two full bins of 100 and a last one of 50, confidences with ties
HLE_LARGE = [_hle_reply("yes" if (i * 7) % 3 else "no", (i * 37) % 101) for i in range(250)]

CASES: dict[str, dict[str, Any]] = {
    "get_a_or_b": {"module": "ais_bench.benchmark.datasets.utils.llm_judge", "name": "get_a_or_b",
                   "kind": "map", "inputs": JUDGE_REPLIES},
    "LLMJudgeCorrectEvaluator": {"module": "ais_bench.benchmark.datasets.utils.llm_judge",
                                 "name": "LLMJudgeCorrectEvaluator", "kind": "evaluator",
                                 "predictions": ["A", "B", "A", "B", "A", "C"], "references": ["1"] * 6},
    "RealworldQAEvaluator": {"module": "ais_bench.benchmark.datasets.realworldqa", "name": "RealworldQAEvaluator",
                             "kind": "evaluator", "predictions": REALWORLDQA_PREDS, "references": REALWORLDQA_REFS},
    "EDAccEvaluator": {"module": "ais_bench.benchmark.openicl.icl_evaluator", "name": "EDAccEvaluator",
                       "kind": "evaluator", "predictions": SIQA_PREDS, "references": SIQA_REFS},
    "LambadaEvaluator": {"module": "ais_bench.benchmark.datasets.lambada", "name": "LambadaEvaluator",
                         "kind": "evaluator", "predictions": [" Paris. is it", "london", "New York", "dog's", "",
                                                               "The cat"],
                         "references": ["Paris", "London", "new", "dog", "x", "cat"]},
    "MGSM_Evaluator": {"module": "ais_bench.benchmark.datasets.mgsm", "name": "MGSM_Evaluator", "kind": "evaluator",
                       "predictions": ["12", "7", "3.0", "5"], "references": ["12", "8", "3", "5"]},
    "MMLUProBaseEvaluator": {"module": "ais_bench.benchmark.datasets.mmlu_pro", "name": "MMLUProBaseEvaluator",
                             "kind": "evaluator", "predictions": ["A", " B\nbecause", "gravity", "C.", "Q", "x. y"],
                             "references": ["A. light", "B. sound", "C. gravity", "C. heat", "Q. q", "D. x. y"]},
    "Xsum": {"module": "ais_bench.benchmark.datasets.xsum", "name": "Xsum_postprocess", "kind": "map",
             "inputs": ["  A summary.\nMore text", "\n\nLate start\nx", "one line"]},
    "HLEJudgeEvaluator": {"module": "ais_bench.benchmark.datasets.hle", "name": "HLEJudgeEvaluator",
                          "kind": "evaluator", "predictions": HLE_SMALL, "references": ["a"] * len(HLE_SMALL)},
    "HLEJudgeEvaluator_250": {"module": "ais_bench.benchmark.datasets.hle", "name": "HLEJudgeEvaluator",
                              "kind": "evaluator", "predictions": HLE_LARGE, "references": ["a"] * 250},
    "IFEvaluator": {"module": "ais_bench.benchmark.datasets.ifeval.ifeval", "name": "IFEvaluator",
                    "kind": "evaluator", "predictions": IFEVAL_PREDS, "references": IFEVAL_REFS,
                    "origin_prompt": [r["prompt"] for r in IFEVAL_REFS]},
}

_CHILD = r"""
import importlib, json, sys
cases = json.loads(sys.stdin.read())
out = {}
for key, c in cases.items():
    obj = getattr(importlib.import_module(c["module"]), c["name"])
    if c["kind"] == "map":
        out[key] = [obj(x) for x in c["inputs"]]
        continue
    kw = {"origin_prompt": c["origin_prompt"]} if "origin_prompt" in c else {}
    res = obj().score(c["predictions"], c["references"], **kw)
    details = res.pop("details", None)
    rows = None
    if isinstance(details, dict):
        details = [details[k] for k in sorted(details, key=int)]
    if isinstance(details, list):
        rows = [{k: v for k, v in d.items() if k in ("correct", "is_strict_correct", "is_loose_correct", "pred",
                                                        "grade")} for d in details]
    out[key] = {"metrics": {k: v for k, v in res.items() if isinstance(v, (int, float))}, "rows": rows,
                "text": {k: v for k, v in res.items() if isinstance(v, str)}}
print("@@" + json.dumps(out, default=str))
"""


def reference_venv() -> Path | None:
    venv = os.environ.get("PROMPTWEAVE_AIS_FULL_VENV")
    return Path(venv) if venv and (Path(venv) / "bin" / "python").exists() else None


def run_reference(venv: Path, names: list[str] | None = None) -> dict[str, Any]:
    """AISBench's answer for each case (``names``: those only), run in ``venv``."""
    cases = {k: v for k, v in CASES.items() if names is None or k in names}
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(venv / "bin" / "python"), "-c", _CHILD], input=json.dumps(cases),
                          capture_output=True, text=True, env=env, timeout=900, cwd="/tmp")
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads([ln for ln in done.stdout.splitlines() if ln.startswith("@@")][-1][2:])


def load_fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}


def record() -> None:  # pragma: no cover - run by hand with the reference venv
    venv = reference_venv()
    if venv is None:
        raise SystemExit("set PROMPTWEAVE_AIS_FULL_VENV to a venv with AISBench installed with its dependencies")
    out = run_reference(venv)
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"recorded {len(out)} cases in {FIXTURE}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(record())
