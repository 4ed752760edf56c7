"""InfiniteBench (100k+ token tasks): the loaders of its twelve JSONL files and its own scoring rules, as
OpenCompass defines them (rewritten from their observable behaviour).

Every task is one JSONL file under ``./data/InfiniteBench/`` (``path`` is read as a local path, OpenCompass's
``local_mode``) whose records hold ``context``, ``input`` (the question) and ``answer`` (most tasks keep a list of
accepted answers there, kept as it is). The loaders keep what each reference class keeps: the question as
``question`` or ``input``; for ``code_run`` the called function and the call parsed out of the question; for
``math_find`` a ``prefix`` asking for the requested statistic; for the choice tasks the four options and the
answer's letter.

Scoring: ``InfiniteBenchendiaEvaluator`` (the first gold name among the reply's upper-cased words),
``InfiniteBenchretrievekvEvaluator`` (the gold value among the reply's words), ``InfiniteBenchmathcalcEvaluator``
(how many leading numbers of the reply equal the gold sequence, summed over rows); each ``score`` ×100 over rows.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths, pct


def codedebug(ctx: LoadContext, path: str) -> Splits:
    """One JSONL file: ``context``, ``input`` (the question), four ``options`` and ``answer`` (a list whose first
    item is one of the options) -> context, question, option_A..option_D and the answer's letter."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, item in jsonl(f):
        need(ctx, item, ("context", "input", "options", "answer"), file=f, where=loc)
        options, answer = item["options"], item["answer"]
        if not isinstance(options, list) or len(options) < 4:
            raise ctx.fail("options must be a list of (at least) four options", file=f, where=f"{loc}.options",
                           value=options)
        if not isinstance(answer, list) or not answer or answer[0] not in options:
            raise ctx.fail("answer must be a list whose first item is one of the options", file=f,
                           where=f"{loc}.answer", value=answer)
        items.append((loc, {"context": item["context"], "question": item["input"],
                            **{f"option_{letter}": options[i] for i, letter in enumerate("ABCD")},
                            "answer": chr(ord("A") + options.index(answer[0]))}))
    return rows(items, f)


_CALL = re.compile(r"func_[0-9]+\(\-?[0-9]+\)")
_STAT = re.compile(r"The .+ of")


def _records(ctx: LoadContext, path: str, keys: tuple[str, ...]) -> tuple[Path, list[tuple[str, Any]]]:
    f = ctx.find(path, local_mode=True)
    return f, [(loc, need(ctx, item, keys, file=f, where=loc)) for loc, item in jsonl(f)]


def _columns(*spec: tuple[str, str]):
    """A loader keeping record fields under the reference's column names: ``(column, field)`` pairs."""
    keys = tuple(dict.fromkeys(field for _, field in spec))

    def load(ctx: LoadContext, path: str) -> Splits:
        f, items = _records(ctx, path, keys)
        return rows(((loc, {col: item[field] for col, field in spec}) for loc, item in items), f)

    return load


qa = _columns(("context", "context"), ("question", "input"), ("answer", "answer"))
context_only = _columns(("context", "context"), ("answer", "answer"))
retrieval = _columns(("context", "context"), ("input", "input"), ("answer", "answer"))


def coderun(ctx: LoadContext, path: str) -> Splits:
    """``func_call``: the first ``func_<n>(<int>)`` in the question; ``func``: its name."""
    f, items = _records(ctx, path, ("context", "input", "answer"))
    out = []
    for loc, item in items:
        found = _CALL.findall(str(item["input"]))
        if not found:
            raise ctx.fail("the question names no call like func_12(-3)", file=f, where=f"{loc}.input",
                           value=str(item["input"])[:80])
        out.append((loc, {"context": item["context"], "func": found[0].split("(")[0], "func_call": found[0],
                          "answer": item["answer"]}))
    return rows(out, f)


def mathfind(ctx: LoadContext, path: str) -> Splits:
    """``prefix``: ``What is <statistic> in the following list?``, the statistic read from the question's
    ``The <statistic> of`` (the longest such span, lower-cased). The shipped config's reader also names a
    ``question`` column, which the reference class never makes (OpenCompass does not check input columns under
    ``ZeroRetriever``; promptweave does): the record's question is kept there. The template never uses it (it
    writes ``{input}``, which is no column and is sent as written, as OpenCompass sends it)."""
    f, items = _records(ctx, path, ("context", "input", "answer"))
    out = []
    for loc, item in items:
        found = _STAT.findall(str(item["input"]))
        if not found:
            raise ctx.fail("the question has no 'The <statistic> of' phrase", file=f, where=f"{loc}.input",
                           value=str(item["input"])[:80])
        target = found[0].lower()[:-3]
        out.append((loc, {"prefix": f"What is {target} in the following list?", "context": item["context"],
                          "question": item["input"], "answer": item["answer"]}))
    return rows(out, f)


_PUNCT = ("\n", ":", '"', "'", ".", ",", "?", "!", "{", "}")


def _words(text: str) -> list[str]:
    for c in _PUNCT:
        text = text.replace(c, " ")
    return text.split()


class _PerRow(Evaluator):
    def row(self, pred: str, ref: Any) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def full(self, ref: Any) -> float:
        return 1.0

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        per = [self.row("" if p is None else str(p), r) for p, r in zip(predictions, references)]
        return Scores({"score": pct(sum(per), len(per))}, [s >= self.full(r) for s, r in zip(per, references)],
                      [{"pred": p, "answer": r, "score": s} for p, r, s in zip(predictions, references, per)])


class InfiniteBenchendiaEvaluator(_PerRow):
    """The gold's first entry (a character name, upper case) among the reply's upper-cased words."""

    name = "InfiniteBenchendiaEvaluator"

    def row(self, pred, ref):
        first = ref[0] if isinstance(ref, (list, tuple, str)) and len(ref) else ref
        return float(first in [w.upper() for w in _words(pred)])


class InfiniteBenchretrievekvEvaluator(_PerRow):
    """The gold value among the reply's words (the gold compared as it is: a list never matches, as in the
    reference)."""

    name = "InfiniteBenchretrievekvEvaluator"

    def row(self, pred, ref):
        return float(ref in _words(pred))


class InfiniteBenchmathcalcEvaluator(_PerRow):
    """The number of leading integers of the reply equal to the gold sequence's, position by position (a row
    adds that count, so ``score`` is not bounded by 100, as in the reference)."""

    name = "InfiniteBenchmathcalcEvaluator"

    def full(self, ref):
        return float(len(ref)) if isinstance(ref, (list, tuple)) else 1.0

    def row(self, pred, ref):
        nums = [int(x) for x in re.split("[^0-9]", pred) if x != ""]
        gold = list(ref) if isinstance(ref, (list, tuple)) else [ref]
        n = 0
        for j, g in enumerate(gold):
            if j >= len(nums) or g != nums[j]:
                break
            n += 1
        return float(n)


def infinitebench_first_number_postprocess(text: str) -> str | None:
    m = re.search(r"\d+\.\d+|\d+", text)
    return str(m.group(0).strip()) if m else None


LOADERS: dict[str, Any] = {
    "InfiniteBenchcodedebugDataset": codedebug,
    "InfiniteBenchenmcDataset": codedebug,
    "InfiniteBenchcoderunDataset": coderun,
    "InfiniteBenchendiaDataset": qa,
    "InfiniteBenchenqaDataset": qa,
    "InfiniteBenchzhqaDataset": qa,
    "InfiniteBenchensumDataset": context_only,
    "InfiniteBenchmathcalcDataset": context_only,
    "InfiniteBenchmathfindDataset": mathfind,
    "InfiniteBenchretrievekvDataset": retrieval,
    "InfiniteBenchretrievenumberDataset": retrieval,
    "InfiniteBenchretrievepasskeyDataset": retrieval,
}
EVALUATORS: dict[str, type] = {
    "InfiniteBenchendiaEvaluator": InfiniteBenchendiaEvaluator,
    "InfiniteBenchretrievekvEvaluator": InfiniteBenchretrievekvEvaluator,
    "InfiniteBenchmathcalcEvaluator": InfiniteBenchmathcalcEvaluator,
}
POSTPROCESSORS = {
    "InfiniteBench_first_number_postprocess": infinitebench_first_number_postprocess,
}
