"""BFCL v3 single-turn scoring (AISBench's ``BFCLSingleTurnEvaluator`` / ``BFCLRelevanceEvaluator``), natively.

A prediction is the function-calling form's ``[{name: arguments_json}, ...]`` (``infer/function_call.py``); it is
decoded (arguments parsed as JSON) and checked against the row's possible answers the way BFCL's AST checker
does for Python-language categories:

- *simple*: exactly one call; *multiple*: exactly one call, to the function the answer names; *parallel* /
  *parallel_multiple*: as many calls as answers, matched in any order;
- a call matches an answer when its name is the answer's (dots in names compared as ``_``, as tools carry them),
  every required parameter is given, every given parameter is documented and has possible values, each value has
  the documented type (an ``integer`` where a ``float`` is documented counts) and is among the possible values
  (strings compared case-insensitively without spaces and ``,./-_*^`` punctuation; lists element by element;
  dicts key by key), and each parameter left out has ``""`` among its possible values (it is optional).

Relevance categories only ask whether the model called something (``irrelevance``: it must not). The metric is
``accuracy`` as a fraction (0..1), with ``correct_count`` and ``total_count``, as the reference reports them.
Java and JavaScript categories convert the model's string arguments to Java / JavaScript values before
comparing; that conversion is not implemented here: those categories use the installed reference's evaluator
(``ais_bench`` with ``bfcl-eval``) through the registry bridge, and are refused with a typed error without it.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths

_PY_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "float": (float,), "boolean": (bool,), "array": (list,),
    "tuple": (list,), "dict": (dict,), "any": (object,),
}
_STRIP = re.compile(r"[ ,./\-_*^]")


def _decode(prediction: Any) -> list[dict[str, Any]]:
    """``[{name: arguments_json}]`` -> ``[{name: arguments}]``; anything else raises (a decoding failure)."""
    if not isinstance(prediction, list):
        raise ValueError("the prediction is not a list of function calls")
    out = []
    for call in prediction:
        if not isinstance(call, Mapping) or not call:
            raise ValueError(f"not a function call: {call!r}"[:120])
        name = next(iter(call))
        args = call[name]
        out.append({name: json.loads(args) if isinstance(args, str) else args})
    return out


def _std(s: str) -> str:
    return _STRIP.sub("", s).lower().replace("'", '"')


def _value_ok(value: Any, possible: Sequence[Any]) -> bool:
    if isinstance(value, str):
        return _std(value) in {_std(p) for p in possible if isinstance(p, str)}
    if isinstance(value, list):
        return any(isinstance(p, list) and len(p) == len(value) and all(
            _value_ok(v, [pv]) for v, pv in zip(value, p)) for p in possible) or value in possible
    if isinstance(value, dict):
        for p in possible:
            if not isinstance(p, dict) or set(value) - set(p):
                continue
            if all(_value_ok(value[k], p[k] if isinstance(p[k], list) else [p[k]]) for k in value) and all(
                    k in value or "" in (p[k] if isinstance(p[k], list) else [p[k]]) for k in p):
                return True
        return False
    return value in possible


def _type_ok(value: Any, expected: str) -> bool:
    if expected == "float" and isinstance(value, int) and not isinstance(value, bool):
        return True
    if expected in ("integer", "float") and isinstance(value, bool):
        return False
    return isinstance(value, _PY_TYPES.get(expected, (object,)))


def _dot(name: str) -> str:
    return re.sub(r"\.", "_", name)


def check_call(doc: Mapping[str, Any], call: Mapping[str, Any], answer: Mapping[str, Any]) -> str | None:
    """None when ``call`` (``{name: args}``) matches ``answer`` (``{name: {param: [values]}}``), else why not."""
    want = _dot(next(iter(answer)))
    possible = next(iter(answer.values())) or {}
    got = {_dot(k): v for k, v in call.items()}
    if want not in got:
        return f"wrong function name: expected {want}, got {', '.join(got) or 'none'}"
    args = got[want]
    if not isinstance(args, Mapping):
        return "the arguments are not an object"
    params = (doc.get("parameters") or {}).get("properties") or {}
    for req in (doc.get("parameters") or {}).get("required") or []:
        if req not in args:
            return f"missing required parameter {req!r}"
    for name, value in args.items():
        if name not in params or name not in possible:
            return f"unexpected parameter {name!r}"
        expected = str((params[name] or {}).get("type", "any"))
        if not _type_ok(value, expected):
            return f"parameter {name!r}: expected type {expected}, got {type(value).__name__}"
        if expected == "float" and isinstance(value, int):
            value = float(value)
        if not _value_ok(value, possible[name]):
            return f"parameter {name!r}: value {value!r} is not among the possible answers"
    for name, values in possible.items():
        if name not in args and "" not in values:
            return f"optional parameter {name!r} not provided"
    return None


def _doc_for(docs: Sequence[Mapping[str, Any]], answer: Mapping[str, Any]) -> Mapping[str, Any]:
    want = _dot(next(iter(answer)))
    for d in docs:
        if _dot(str(d.get("name", ""))) == want:
            return d
    return docs[0] if docs else {}


def ast_check(docs: Sequence[Mapping[str, Any]], calls: list[dict[str, Any]], answers: list[dict[str, Any]],
              category: str) -> str | None:
    """None when the calls answer the row (BFCL's rules per category), else the first reason they do not."""
    if "parallel" in category:
        if len(calls) != len(answers):
            return f"wrong number of calls: expected {len(answers)}, got {len(calls)}"
        left = list(range(len(calls)))
        for ans in answers:
            hit = next((i for i in left if check_call(_doc_for(docs, ans), calls[i], ans) is None), None)
            if hit is None:
                return f"no call matches the possible answer for {next(iter(ans))}"
            left.remove(hit)
        return None
    if len(calls) != 1 or len(answers) != 1:
        return f"wrong number of calls: expected 1, got {len(calls)}"
    return check_call(_doc_for(docs, answers[0]), calls[0], answers[0])


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


class _BFCL(Evaluator):
    needs = frozenset({"rows"})

    def __init__(self, category: str = "", is_fc_model: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not is_fc_model:
            raise EvaluationError(f"{self.name}: is_fc_model=False decodes calls from prompt-style text, which the "
                                  "function-calling form does not produce", field="evaluator.is_fc_model",
                                  value=is_fc_model, expected="True (the default)")
        self.category = str(category)

    def _rows(self, n: int, ctx: EvalContext | None) -> list[Mapping[str, Any]]:
        rows = list(ctx.rows) if ctx is not None else []
        if len(rows) < n:
            raise EvaluationError(f"{self.name} needs the test rows (id, function) beside the predictions",
                                  field="evaluator", expected=f"{n} rows")
        return rows[:n]


class BFCLSingleTurnEvaluator(_BFCL):
    name = "BFCLSingleTurnEvaluator"

    def __new__(cls, category: str = "", is_fc_model: bool = True, **kwargs: Any) -> Any:
        if "java" in str(category):  # Java / JavaScript literals: the installed reference's class when there is one
            from promptweave.compat.bridge import reference_class

            found = reference_class("evaluator", cls.name)
            if found is not None:
                from promptweave.evaluate.bridged import BridgedEvaluator

                return BridgedEvaluator(found[0], found[1], {"category": category, "is_fc_model": is_fc_model,
                                                             **kwargs}, "evaluator")
        return super().__new__(cls)

    def __init__(self, category: str = "", is_fc_model: bool = True, **kwargs: Any) -> None:
        super().__init__(category, is_fc_model, **kwargs)
        if "java" in self.category:  # java and javascript
            raise EvaluationError(
                f"BFCLSingleTurnEvaluator for category {self.category!r} converts the model's string arguments to "
                "Java / JavaScript values (bfcl_eval's type converters), which promptweave does not implement",
                field="evaluator.category", value=self.category,
                expected="a Python-language BFCL category (simple, multiple, parallel, parallel_multiple, live_*), "
                         "or ais_bench and bfcl-eval installed (their evaluator is then used)")

    def score(self, predictions: Sequence[Any], references: Sequence[Any],
              ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        rows = self._rows(len(predictions), ctx)
        correct: list[bool | None] = []
        details = []
        for pred, ref, row in zip(predictions, references, rows):
            answers = _json(ref)
            if not isinstance(answers, list) or not all(isinstance(a, Mapping) and len(a) == 1 for a in answers):
                raise EvaluationError(f"{self.name}: a row's ground_truth must be a list of {{function: "
                                      "{parameter: [possible values]}}", field=f"test rows: {row.get('id')}",
                                      value=str(ref)[:80])
            try:
                calls = _decode(pred)
            except (ValueError, TypeError, StopIteration) as exc:
                correct.append(False)
                details.append({"id": row.get("id"), "correct": False, "error_type": "ast_decoder:decoder_failed",
                                "error": [f"Invalid syntax. Failed to decode AST. {exc}"]})
                continue
            why = ast_check(_json(row.get("function")) or [], calls, answers, self.category)
            correct.append(why is None)
            if why is not None:
                details.append({"id": row.get("id"), "correct": False, "predictions": calls,
                                "references": answers, "error": [why]})
        n = sum(bool(c) for c in correct)
        return Scores({"accuracy": n / len(correct) if correct else 0.0, "correct_count": n,
                       "total_count": len(correct)}, correct, details)


class BFCLRelevanceEvaluator(_BFCL):
    name = "BFCLRelevanceEvaluator"

    def score(self, predictions: Sequence[Any], references: Sequence[Any],
              ctx: EvalContext | None = None) -> Scores:
        rows = self._rows(len(predictions), ctx)
        correct: list[bool | None] = []
        details = []
        for pred, row in zip(predictions, rows):
            try:
                called = bool(_decode(pred))
            except (ValueError, TypeError):
                called = False
            irrelevance = "irrelevance" in str(row.get("id", ""))
            ok = not called if irrelevance else called
            correct.append(ok)
            if not ok:
                details.append({"id": row.get("id"), "correct": False, "origin_prediction": pred,
                                "error_type": "irrelevance_error:decoder_success" if irrelevance
                                else "relevance_error:decoder_failed"})
        n = sum(bool(c) for c in correct)
        return Scores({"accuracy": n / len(correct) if correct else 0.0, "correct_count": n,
                       "total_count": len(correct)}, correct, details)
