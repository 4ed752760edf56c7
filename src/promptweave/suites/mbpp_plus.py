"""MBPP and MBPP+: the loaders (MBPP's JSONL, sanitized MBPP, EvalPlus's MBPP+ problems) and
``MBPPEvaluator(metric='MBPPPlus')``: EvalPlus's base and plus tests, run natively in the code sandbox.

OpenCompass hands the extracted code of each answer to the ``evalplus`` package, keyed by the row's ``task_id``
(``Mbpp/N``), and reports ``mbpp_plus_pass@1``: the share (×100) of tasks whose first answer passes the *plus*
tests (evalplus's ``plus_status``; the base tests are run and reported per row but, as in the reference, do not
enter the figure).

Each problem has ``base_input`` and ``plus_input`` (argument lists), ``prompt + canonical_solution`` (the reference
solution), ``entry_point`` and ``atol``. For every input the expected output is the reference solution's (run on a
copy of the arguments), and its run time sets the answer's time limit for that input: ``max(0.2 s, 4 × time)``
(OpenCompass's settings); all inputs together get ``min(60 s, sum of limits) + 2 s``. An answer passes a test
set when it returns, for every input, a value equal to the expected one: exactly, else (when ``atol`` is set, or
the expected value is a float or a list/tuple of floats, which sets ``atol`` to 1e-6 from then on) of the same
type and length and within ``atol + 1e-7 × |expected|`` element-wise. EvalPlus's per-task rules are kept: some
tasks compare as sets, some only check the result is not None, four have their own oracle.

Both the reference solution and the answer run only in the code sandbox (``evaluate/code_exec.py``, with
``--allow-code-exec``), in two sandboxes per answer and test set: the checker and the reference solution in one,
the answer in the other, which only answers the calls relayed to it (its outputs are compared where no model code
runs). The problems come from the test rows when
they carry the tests (``base_input``...), else from EvalPlus's own data file (``MbppPlus-<version>.jsonl``), found
where evalplus keeps it: ``$MBPP_OVERRIDE_PATH``, then the evalplus cache folder (``$XDG_CACHE_HOME/evalplus`` or
``~/.cache/evalplus``). Nothing is downloaded.
"""
from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.data.sources import Split
from promptweave.errors import CodeExecutionError, DataNotFoundError, PromptweaveWarning
from promptweave.evaluate.code_exec import Limits, require_flag, run_many, sandbox_of
from promptweave.evaluate.code_relay import RelayJob
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import check_lengths
from promptweave.suites.code import mbpp
from promptweave.suites.code.mbpp import mbpp_answer

MIN_TIME_LIMIT = 0.2  # OpenCompass's min_time_limit for evalplus
TIME_LIMIT_FACTOR = 4.0  # gt_time_limit_factor
_PROBLEM_KEYS = ("prompt", "canonical_solution", "entry_point", "base_input", "plus_input")

# The checker run inside the sandbox (after the runner's limits are set). It reads the problem and the answer from
# the JSON literal below, computes the expected outputs with the reference solution, then runs the answer on each
# input under its time limit (``_pw_check``, given the answer's entry point: a stand-in whose calls the judge relays
# to the answer's own sandbox). A wrong or failing input makes the run end in AssertionError ("fail"); running out
# of the overall time budget ends in _Deadline ("timeout").
_CHECKER = r'''
import copy as _copy, json as _json, math as _math, signal as _signal, time as _time
_job = _json.loads(__PW_JOB__)

class _Deadline(BaseException):
    pass

class _InputTimeout(Exception):
    pass

def _alarm(seconds, exc):
    def _raise(signum, frame):
        raise exc()
    _signal.signal(_signal.SIGALRM, _raise)
    _signal.setitimer(_signal.ITIMER_REAL, max(seconds, 0.001))

def _disarm():
    _signal.setitimer(_signal.ITIMER_REAL, 0)

def _as_tuples(x):
    return tuple(_as_tuples(v) for v in x) if isinstance(x, list) else x

def _convert(n, inputs):
    # EvalPlus stores MBPP+ arguments as JSON; these tasks take tuples, sets or complex numbers
    rule = _job["rules"].get(str(n))
    if rule is None:
        return inputs
    if rule == "args":
        return [[tuple(a) for a in inp] for inp in inputs]
    if rule == "args_items":
        return [[[tuple(x) for x in a] for a in inp] for inp in inputs]
    if rule == "first_items":
        return [[[tuple(x) for x in inp[0]]] + [inp[1]] for inp in inputs]
    if rule == "second":
        return [[inp[0]] + [tuple(inp[1])] for inp in inputs]
    if rule == "sets":
        return [[[set(x) if isinstance(x, list) and len(x) else {} for x in inp[0]]] for inp in inputs]
    if rule == "float_complex":
        return [(float(inp[0]), complex(inp[1])) for inp in inputs]
    if rule == "first":
        return [[tuple(inp[0])] + [inp[1]] for inp in inputs]
    if rule == "args_nested":
        return [[tuple(tuple(x) for x in a) for a in inp] for inp in inputs]
    if rule == "first_nested":
        return [[tuple(tuple(x) if isinstance(x, list) else x for x in inp[0])] for inp in inputs]
    if rule == "first_three":
        return [[tuple(inp[0])] + [inp[1], inp[2]] for inp in inputs]
    if rule == "dict_values":
        return [[{k: tuple(v) for k, v in inp[0].items()}] + inp[1:] for inp in inputs]
    if rule == "complex":
        return [[complex(inp[0])] for inp in inputs]
    if rule == "deep":
        return [_as_tuples(inp) for inp in inputs]
    raise ValueError(rule)

def _floats(x):
    if isinstance(x, float):
        return True
    return isinstance(x, (list, tuple)) and bool(x) and all(isinstance(v, float) for v in x)

def _close(a, b, atol):
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) or len(a) != len(b):
            return False
        return all(_close(x, y, atol) for x, y in zip(a, b))
    if not isinstance(a, (int, float, complex)) or not isinstance(b, (int, float, complex)):
        return False
    if a == b:
        return True
    if any(isinstance(v, float) and _math.isnan(v) for v in (a, b)):
        return False
    if any(isinstance(v, float) and _math.isinf(v) for v in (a, b)):
        return False
    return abs(a - b) <= atol + 1e-7 * abs(b)

def _pyramid_area(base, height):
    slant = _math.sqrt((base / 2) ** 2 + height ** 2)
    return round(base ** 2 + 2 * base * slant)

def _digit_distance(a, b):
    x, y = str(a), str(b)
    width = max(len(x), len(y))
    return sum(abs(int(p) - int(q)) for p, q in zip(x.zfill(width), y.zfill(width)))

_entry = _job["entry_point"]
_inputs = _convert(_job["number"], _job["inputs"])
_ref = {}
exec(compile(_job["reference"], "<reference solution>", "exec"), _ref)
_expected, _limits = [], []
for _inp in _inputs:
    _t0 = _time.perf_counter()
    _expected.append(_ref[_entry](*_copy.deepcopy(_inp)))
    _limits.append(max(_job["min_time"], _job["factor"] * (_time.perf_counter() - _t0)))
if _entry in _job["not_none"]:
    _expected = [v is not None for v in _expected]
_budget = min(60.0, sum(_limits)) + 2.0
_end = _time.perf_counter() + _budget

def _left():
    left = _end - _time.perf_counter()
    if left <= 0:
        raise _Deadline()
    return left

def _matches(out, exp, inp, atol):
    try:
        same = out == exp
        exact = bool(same) if isinstance(same, bool) else False
    except Exception:
        exact = False
    if _entry == "are_equivalent":
        exact = True
    elif _entry == "sum_div":
        exact = exact or out == 0
    elif _entry == "surface_Area":
        exact = exact or abs(out - _pyramid_area(*inp)) <= atol
    elif _entry == "digit_distance_nums":
        exact = exact or out == _digit_distance(*inp)
    elif _entry in _job["set_eq"]:
        exact = set(out) == set(exp)
    elif _entry in _job["not_none"]:
        exact = (out == exp) if isinstance(out, bool) else (exp == (out is not None))
    if atol == 0 and _floats(exp):
        atol = 1e-6
    if not exact and atol != 0:
        ok = type(out) is type(exp) and (not isinstance(exp, (list, tuple)) or len(out) == len(exp)) \
            and _close(out, exp, atol)
    else:
        ok = bool(exact)
    return ok, atol

def _pw_check(_fn):
    _failed = []
    _atol = _job["atol"]
    for _i, (_inp, _exp) in enumerate(zip(_inputs, _expected)):
        _room = _left()
        try:
            if _room < _limits[_i]:
                _alarm(_room, _Deadline)
            else:
                _alarm(_limits[_i], _InputTimeout)
            try:
                _out = _fn(*_copy.deepcopy(_inp))
            finally:
                _disarm()
            _ok, _atol = _matches(_out, _exp, _inp, _atol)
        except _Deadline:
            raise
        except BaseException:
            _ok = False
        if not _ok:
            _failed.append(_i)
    if _failed:
        raise AssertionError(_failed[:1])
'''

# EvalPlus's MBPP+ argument conversions by task number (see _convert in the checker)
_RULES: dict[str, tuple[int, ...]] = {
    "args": (2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630, 726, 740, 744,
             809),
    "args_items": (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780),
    "first_items": (75, 413, 444, 753),
    "second": (106, 750),
    "sets": (115,),
    "float_complex": (124,),
    "first": (250, 405, 446, 617, 720, 763, 808),
    "args_nested": (259, 401, 445),
    "first_nested": (278,),
    "first_three": (307,),
    "dict_values": (722,),
    "complex": (252,),
    "deep": (580, 615, 791),
}
RULES = {str(n): rule for rule, ns in _RULES.items() for n in ns}
NOT_NONE = ("check_str", "text_match_three", "text_starta_endb")
SET_EQ = ("similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly", "larg_nnum",
          "intersection_array", "find_dissimilar", "Diff")


def task_key(task_id: Any) -> str:
    """``Mbpp/N`` for ``'Mbpp/N'``, ``N`` or ``'N'`` (EvalPlus keys its problems so)."""
    s = str(task_id).strip()
    return s if "/" in s else f"Mbpp/{s}"


def _number(key: str) -> int | None:
    tail = key.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else None


def evalplus_folders() -> list[Path]:
    """evalplus's cache folder (``appdirs.user_cache_dir('evalplus')``), where its downloads of MbppPlus go."""
    import sys

    xdg = os.environ.get("XDG_CACHE_HOME")
    if sys.platform == "darwin" and not xdg:
        return [Path.home() / "Library" / "Caches" / "evalplus"]
    return [(Path(xdg) if xdg else Path.home() / ".cache") / "evalplus"]


def find_data_file() -> tuple[Path | None, list[str]]:
    """EvalPlus's MBPP+ file, and every place looked at (for the error when there is none)."""
    tried: list[str] = []
    override = os.environ.get("MBPP_OVERRIDE_PATH")
    if override:
        tried.append(f"$MBPP_OVERRIDE_PATH={override}")
        if Path(override).is_file():
            return Path(override), tried
    for folder in evalplus_folders():
        tried.append(f"{folder}/MbppPlus*.jsonl")
        found = sorted(folder.glob("MbppPlus*.jsonl")) if folder.is_dir() else []
        # evalplus's default version first, then the newest name
        found.sort(key=lambda p: (p.name != "MbppPlus-v0.2.0.jsonl", [-ord(c) for c in p.name]))
        if found:
            return found[0], tried
    return None, tried


def load_problems(path: Path) -> dict[str, dict[str, Any]]:
    from promptweave.data.sources import text_lines

    out: dict[str, dict[str, Any]] = {}
    for i, line in enumerate(text_lines(path), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            raise DataNotFoundError("not a JSON line of MBPP+ problems", file=str(path), field=f"line {i}",
                                    value=line[:60]) from None
        if isinstance(item, Mapping) and "task_id" in item:
            out[task_key(item["task_id"])] = dict(item)
    return out


class MBPPPlusEvaluator:
    """``MBPPEvaluator(metric='MBPPPlus')``: ``mbpp_plus_pass@1`` (see the module docstring)."""

    name = "MBPPEvaluator(metric='MBPPPlus')"
    needs = frozenset({"code", "rows"})
    limits = Limits(timeout_s=90.0, memory_mb=4096, cpu_s=90)
    min_time_limit = MIN_TIME_LIMIT
    time_limit_factor = TIME_LIMIT_FACTOR

    def __init__(self, **_ignored: Any) -> None:
        pass

    def _problems(self, keys: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        problems: dict[str, dict[str, Any]] = {}
        for key, row in zip(keys, rows):
            if isinstance(row, Mapping) and all(k in row for k in _PROBLEM_KEYS):
                problems.setdefault(key, dict(row))
        if all(k in problems for k in keys):
            return problems
        path, tried = find_data_file()
        if path is None:
            raise DataNotFoundError(
                "MBPP+ needs EvalPlus's test inputs (base_input / plus_input of each task), which neither the test "
                "rows nor EvalPlus's data file give; looked in: " + "; ".join(tried),
                field="evaluator.metric", value="MBPPPlus",
                expected="EvalPlus's MbppPlus-v0.2.0.jsonl in ~/.cache/evalplus (e.g. pip install evalplus, then "
                         "python -c 'from evalplus.data import get_mbpp_plus; get_mbpp_plus()'), or "
                         "MBPP_OVERRIDE_PATH=<MbppPlus jsonl>; promptweave downloads nothing")
        return {**load_problems(path), **problems}

    def _job(self, problem: Mapping[str, Any], key: str, solution: str, which: str) -> RelayJob:
        """The checker runs in a sandbox of its own (the reference solution gives the expected outputs there); each
        call of the answer is relayed to the answer's sandbox, which can only answer with values."""
        entry = str(problem["entry_point"])
        job = {"entry_point": entry, "number": _number(key),
               "inputs": problem[f"{which}_input"], "reference": f"{problem['prompt']}{problem['canonical_solution']}",
               "atol": problem.get("atol") or 0, "rules": RULES, "not_none": list(NOT_NONE),
               "set_eq": list(SET_EQ), "min_time": self.min_time_limit, "factor": self.time_limit_factor}
        text = json.dumps(job, ensure_ascii=False, allow_nan=True)
        checker = _CHECKER.replace("__PW_JOB__", repr(text), 1)
        # an answer that does not load or does not define the entry point fails its tests, as in the reference
        return RelayJob(solution, entry, "", checker, check="_pw_check", setup_failure="wrong_answer")

    def score(self, predictions, references, ctx=None) -> Scores:
        require_flag(ctx, self.name)
        check_lengths(predictions, references, self.name)
        keys = [task_key(r) for r in references]
        rows = list(ctx.rows) if ctx is not None and ctx.rows else [{}] * len(keys)
        problems = self._problems(keys, rows)
        unknown = sorted({k for k in keys if k not in problems})
        if len(unknown) == len(set(keys)) and keys:
            raise CodeExecutionError("no task of the predictions is an MBPP+ problem of the test data",
                                     field="evaluator.metric", value=unknown[:5],
                                     expected="task ids such as 'Mbpp/2' (the dataset's output_column is task_id)")
        if unknown:  # evalplus skips these with a warning, and they are not counted
            warnings.warn(f"MBPP+: {len(unknown)} task id(s) not among the MBPP+ problems, left out of the score: "
                          + ", ".join(unknown[:5]), PromptweaveWarning, stacklevel=2)
        jobs, owners = [], []
        for i, (preds, key) in enumerate(zip(predictions, keys)):
            if key not in problems:
                continue
            for s, pred in enumerate(preds if isinstance(preds, list) else [preds]):
                solution = mbpp_answer(str(pred))
                for which in ("base", "plus"):
                    jobs.append(self._job(problems[key], key, solution, which))
                    owners.append((i, s, which, solution))
        results = run_many(jobs, self.limits, workers=max(1, (os.cpu_count() or 2) // 2), sandbox=sandbox_of(ctx))
        status = {"pass": "pass", "wrong_answer": "fail", "failed": "timeout", "timeout": "timeout"}
        per_row: dict[int, list[dict[str, Any]]] = {}
        for (i, s, which, solution), res in zip(owners, results):
            samples = per_row.setdefault(i, [])
            if len(samples) <= s:
                samples.append({"task_id": keys[i], "solution": solution})
            samples[s][f"{which}_status"] = status[res]
        first: dict[str, dict[str, Any]] = {}  # the first answer of each task, in row order, is the one counted
        for i in sorted(per_row):
            first.setdefault(keys[i], per_row[i][0])
        passed = sum(1 for d in first.values() if d.get("plus_status") == "pass")
        metrics = {"mbpp_plus_pass@1": 100.0 * passed / len(first) if first else 0.0}
        correct: list[bool | None] = []
        details: list[dict] = []
        for i in range(len(predictions)):
            samples = per_row.get(i)
            if not samples:
                correct.append(None)
                details.append({"task_id": keys[i], "result": "not an MBPP+ task"})
                continue
            correct.append(samples[0].get("plus_status") == "pass")
            details.append({**samples[0], "samples": samples} if len(samples) > 1 else samples[0])
        return Scores(metrics, correct, details)


class MBPPEvaluator(mbpp.MBPPEvaluator):
    """OpenCompass's ``MBPPEvaluator``: ``metric='MBPP'`` (the row's asserts) or ``'MBPPPlus'`` (EvalPlus)."""

    def __new__(cls, metric: str = "MBPP", **kwargs: Any) -> Any:
        if metric == "MBPPPlus":
            return MBPPPlusEvaluator(**kwargs)
        return super().__new__(cls)

    def __init__(self, metric: str = "MBPP", **kwargs: Any) -> None:
        if metric != "MBPP":
            raise CodeExecutionError("unknown MBPPEvaluator metric", field="evaluator.metric", value=metric,
                                     expected="'MBPP' or 'MBPPPlus'")
        super().__init__(metric=metric, **kwargs)


# the suite's entries in the compat registries (compat/suites.py)


def _mbpp(ctx: LoadContext, path: str, *, train: int, stop: int, repeats: int, kind: str,
          local_mode: bool = False) -> Splits:
    f = ctx.find(path, local_mode=local_mode)
    data = jsonl(f)

    def convert(loc: str, item: Any) -> dict[str, Any]:
        need(ctx, item, ("test_list", "task_id") + (("prompt",) if kind == "sanitized" else ()), file=f, where=loc)
        row = dict(item)
        tests = row["test_list"]
        joined = "\n".join(tests)
        if kind == "sanitized":
            row["text"] = row.pop("prompt")
        if kind == "v1":
            row["test_case"] = tests
            row["test_list"] = joined
            row["test_list_2"] = joined
        else:
            if kind == "v2":
                row["test_case"] = tests
            row["test_list"] = joined
            if kind == "sanitized":
                row["test_list_2"] = joined
            row["test_column"] = {"test_list_2": joined, "task_id": row["task_id"]}
        return row

    train_part = rows(((loc, convert(loc, it)) for loc, it in data[:train]), f)
    test_items = [(loc, convert(loc, it)) for loc, it in data[train:stop]]
    test_part = rows(test_items * int(repeats), f)
    return {"train": train_part, "test": Split(test_part.rows, test_part.file, test_part.where)}


def mbpp(ctx: LoadContext, path: str, local_mode: bool = False) -> Splits:
    """MBPP: rows 0-9 train, 10-509 test; ``test_list`` joined into one string, the list kept as ``test_case``."""
    return _mbpp(ctx, path, train=10, stop=510, repeats=1, kind="v1", local_mode=local_mode)


def mbpp_v2(ctx: LoadContext, path: str, num_repeats: int = 1) -> Splits:
    """As MBPPDataset, with ``test_column`` (joined tests + task id) for the pass@k evaluator."""
    return _mbpp(ctx, path, train=10, stop=510, repeats=num_repeats, kind="v2")


def sanitized_mbpp(ctx: LoadContext, path: str, num_repeats: int = 1) -> Splits:
    """Sanitized MBPP: rows 0-6 train, 7-263 test; ``prompt`` renamed ``text``."""
    return _mbpp(ctx, path, train=7, stop=264, repeats=num_repeats, kind="sanitized")


def mbpp_plus(ctx: LoadContext, path: str, num_repeats: int = 1) -> Splits:
    """MBPP+ JSONL; ``test_list`` joined into one string (the list kept as ``test_case``), ``test_column`` for
    pass@k, each problem repeated ``num_repeats`` times in place."""
    f = ctx.find(path)
    items = []
    for loc, line in jsonl(f):
        row = dict(need(ctx, line, ("task_id", "test_list"), file=f, where=loc))
        row["test_case"] = row["test_list"]
        joined = "\n".join(row["test_list"]) if isinstance(row["test_list"], list) else str(row["test_list"])
        row["test_list"] = row["test_list_2"] = joined
        row["test_column"] = {"test_list_2": joined, "task_id": row["task_id"]}
        items.extend((loc, row) for _ in range(int(num_repeats)))
    return rows(items, f)


EVALUATORS: dict[str, type] = {"MBPPEvaluator": MBPPEvaluator}  # metric='MBPP' or 'MBPPPlus' (EvalPlus)
LOADERS = {
    "MBPPDataset": mbpp,
    "MBPPDatasetV2": mbpp_v2,
    "SanitizedMBPPDataset": sanitized_mbpp,
    "MBPPPlusDataset": mbpp_plus,
}
