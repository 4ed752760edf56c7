"""Stand-in MBPP+ problems in EvalPlus's file layout, scripted answers, and the expected verdicts computed here
in plain Python (trusted test code), independently of the sandboxed checker."""
from __future__ import annotations

import json
import math
from pathlib import Path

PROBLEMS = [
    {"task_id": "Mbpp/2", "prompt": '"""\nShared elements of two lists.\n"""\n', "entry_point": "similar_elements",
     "canonical_solution": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
     "base_input": [[[3, 4, 5, 6], [5, 7, 4, 10]]], "plus_input": [[[1, 2, 3], [2, 3, 4]], [[9], [8]]], "atol": 0},
    {"task_id": "Mbpp/3", "prompt": "", "entry_point": "is_not_prime",
     "canonical_solution": "def is_not_prime(n):\n    return n < 2 or any(n % d == 0 for d in range(2, int(n ** 0.5) + 1))\n",
     "base_input": [[2], [10], [35]], "plus_input": [[1], [49], [97], [221]], "atol": 0},
    {"task_id": "Mbpp/4", "prompt": "", "entry_point": "circle_area",
     "canonical_solution": "import math\ndef circle_area(r):\n    return math.pi * r * r\n",
     "base_input": [[1.0], [2.5]], "plus_input": [[10.0], [0.5]], "atol": 0},
    {"task_id": "Mbpp/5", "prompt": "", "entry_point": "double",
     "canonical_solution": "def double(x):\n    return 2 * x\n",
     "base_input": [[0], [1]], "plus_input": [[5], [7]], "atol": 0},
    {"task_id": "Mbpp/6", "prompt": "", "entry_point": "count_up",
     "canonical_solution": "def count_up(n):\n    return list(range(n))\n",
     "base_input": [[3]], "plus_input": [[4], [-1]], "atol": 0},
]

# answers by task: right; right on base only (a lookup table); float within tolerance; wrong on base but right on
# plus; endless loop on one plus input
ANSWERS = {
    "Mbpp/2": "def similar_elements(a, b):\n    return sorted(set(a) & set(b))\n",  # a list: compared as a set
    "Mbpp/3": "def is_not_prime(n):\n    return n in (10, 35)\n",
    "Mbpp/4": "def circle_area(r):\n    return 3.14159265359 * r * r\n",
    "Mbpp/5": "def double(x):\n    return 2 * x if x > 1 else -1\n",
    "Mbpp/6": "def count_up(n):\n    out = []\n    i = 0\n    while i != n:\n        out.append(i)\n        i += 1\n"
              "    return out\n",
}
SET_EQ = {"similar_elements"}


def write_evalplus_file(folder: Path, problems: list[dict] = PROBLEMS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "MbppPlus-v0.2.0.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in problems), encoding="utf-8")
    return path


def _args(task_id: str, inp: list) -> list:
    return [tuple(a) for a in inp] if task_id == "Mbpp/2" else inp  # EvalPlus passes Mbpp/2's lists as tuples


def _same(out, exp, entry: str) -> bool:
    if entry in SET_EQ:
        return set(out) == set(exp)
    if isinstance(exp, float):
        return isinstance(out, float) and abs(out - exp) <= 1e-6 + 1e-7 * abs(exp)
    return out == exp


def expected_status(problem: dict, answer: str, which: str) -> str:
    """pass / fail, run here in-process; an input that does not finish within 10k steps counts as failing."""
    ref_ns: dict = {}
    exec(problem["prompt"] + problem["canonical_solution"], ref_ns)
    ans_ns: dict = {}
    exec(answer, ans_ns)
    entry = problem["entry_point"]
    for inp in problem[f"{which}_input"]:
        args = _args(problem["task_id"], inp)
        exp = ref_ns[entry](*args)
        if entry == "count_up" and args[0] < 0 and "while i != n" in answer:
            return "fail"  # the scripted endless loop: never run here
        if not _same(ans_ns[entry](*args), exp, entry):
            return "fail"
    return "pass"


def expected_pass_at_1(answers: dict[str, str]) -> float:
    """OpenCompass's figure: tasks whose answer passes the plus tests, over tasks."""
    by_id = {p["task_id"]: p for p in PROBLEMS}
    ok = sum(expected_status(by_id[t], a, "plus") == "pass" for t, a in answers.items())
    return 100.0 * ok / len(answers)


assert math.isclose(3.14159265359, math.pi, abs_tol=1e-10)
