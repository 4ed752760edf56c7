"""L-Eval (long-document exams and generation tasks): its loaders, exact-match scoring and GSM100 answer rules, as
OpenCompass and AISBench define them (rewritten from their observable behaviour).

Data: the ``L4NLP/LEval`` repository keeps one JSONL file per task under ``LEval/Exam/`` (multiple choice, maths,
topic retrieval ...) and ``LEval/Generation/`` (summaries, open questions). A record holds a long document
(``input``) and parallel lists of questions (``instructions``) and gold answers (``outputs``); every loader makes
one row per question: ``question``, ``context``, ``answer``, and for the generation tasks ``length`` (the gold's
word count, which their prompts ask the model to match). OpenCompass names the repository (``path='L4NLP/LEval',
name='coursera'``), AISBench the file (``ais_bench/datasets/LEval/LEval/Exam/coursera.jsonl``); both are read here
(``data.loaders.hub_subsets``).

Scoring: ``LEvalEMEvaluator`` counts a row right when the gold, as written or after ``general_postprocess``,
occurs in the postprocessed reply (OpenCompass reports it as ``score``, AISBench as ``accuracy``); AISBench adds
``CodeUEvaluator`` (the program's printed output, normalised) and ``SciFiEvaluator`` (the loyalty true/false
verdict). OpenCompass's ``LEvalGPTEvaluator`` (pairwise battles against a bundled model's answers, with the
OpenAI API hard-wired) is named by no shipped config and is not provided.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, need, rows
from promptweave.data.loaders.hub_subsets import subset_records
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths, pct
from promptweave.evaluate.postprocess import general_postprocess, normalize_answer

# the tasks whose rows carry ``length`` (the generation tasks); the others are the exams
_WITH_LENGTH = frozenset({
    "LEvalFinancialQADataset", "LEvalGovReportSummDataset", "LEvalLegalContractQADataset",
    "LEvalMeetingSummDataset", "LEvalMultidocQADataset", "LEvalNarrativeQADataset", "LEvalNaturalQuestionDataset",
    "LEvalNewsSummDataset", "LEvalPaperAssistantDataset", "LEvalPatentSummDataset", "LEvalReviewSummDataset",
    "LEvalScientificQADataset", "LEvalTVShowSummDataset",
})
_EXAMS = frozenset({
    "LEvalCourseraDataset", "LEvalGSM100Dataset", "LEvalQualityDataset", "LEvalTopicRetrievalDataset",
    "LEvalTPODataset", "LEvalCodeUDataset", "LEvalSciFiDataset",
})
_LAYOUT = "L4NLP/LEval's files: <folder>/LEval/Exam/<name>.jsonl or <folder>/LEval/Generation/<name>.jsonl"


def _places(root: Path, name: str) -> list[Path]:
    f = f"{name}.jsonl"
    return [root / "LEval" / "Exam" / f, root / "LEval" / "Generation" / f, root / "Exam" / f,
            root / "Generation" / f, root / f, root / "data" / f]


def leval(ctx: LoadContext, path: str, name: str | None = None, data_files: Any = None) -> Splits:
    """One row per (document, question): ``question``, ``context``, ``answer`` (+ ``length`` for the generation
    tasks), in the ``test`` split only, as the reference classes return."""
    part = subset_records(ctx, path, name, _places, data_files=data_files, layout=_LAYOUT)
    with_length = ctx.loader in _WITH_LENGTH
    items = []
    for i, rec in enumerate(part.rows):
        loc = part.locate(i)
        rec = need(ctx, rec, ("instructions", "outputs", "input"), file=Path(part.file), where=loc)
        qs, answers = rec["instructions"], rec["outputs"]
        if not isinstance(qs, list) or not isinstance(answers, list):
            raise ctx.fail("instructions and outputs must be lists (one entry per question)", file=part.file,
                           where=loc, value=type(qs).__name__)
        for j, (q, a) in enumerate(zip(qs, answers)):  # the reference pairs them with zip: extras are dropped
            row: dict[str, Any] = {"question": q, "context": rec["input"]}
            if with_length:
                if not isinstance(a, str):
                    raise ctx.fail("a generation task's gold answer must be text", file=part.file,
                                   where=f"{loc}.outputs[{j}]", value=a)
                row["length"] = len(a.split())
            row["answer"] = a
            items.append((f"{loc}.instructions[{j}]", row))
    return {"test": rows(items, part.file)}


# -- postprocessors (GSM100) --------------------------------------------------------------------------------------


def gsm100_dataset_postprocess(text: str) -> str:
    """The gold number with its thousands separators dropped."""
    return str(text).replace(",", "")


def gsm100_postprocess(text: str) -> str:
    """The digits of the first space-separated word holding a digit after the first ``The answer is``; ``''``
    when the reply has no such phrase (or no digit after it)."""
    parts = str(text).split("The answer is")
    if len(parts) < 2:
        return ""
    for word in parts[1].split(" "):
        if any(c.isdigit() for c in word):
            return "".join(c for c in word if c.isdigit())
    return ""


# -- evaluators ---------------------------------------------------------------------------------------------------


class LEvalEMEvaluator(Evaluator):
    """A row is right when the gold (postprocessed, or as written) is a substring of the postprocessed reply."""

    name = "LEvalEMEvaluator"
    metric = "score"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        correct, details = [], []
        for p, r in zip(predictions, references):
            pred, gold = general_postprocess(str(p)), str(r)
            ok = general_postprocess(gold) in pred or gold in pred
            correct.append(ok)
            details.append({"pred": pred, "answer": gold, "correct": ok})
        return Scores({self.metric: pct(sum(correct), len(correct))}, correct, details)


class AISLEvalEMEvaluator(LEvalEMEvaluator):
    """AISBench's: the same rule, reported as ``accuracy``."""

    metric = "accuracy"


def _code_text(s: str) -> str:
    s = re.sub(r"\s+", " ", s)
    s = s.replace(",", "").replace("'", "").replace("\\", "")
    s = s.replace(".0", "").replace("] [", "][").replace("[ [", "[[").replace("] ]", "]]")
    return s.strip()


class CodeUEvaluator(Evaluator):
    """AISBench's L-Eval Code U score: the reply's printed output (the words after ``the final output``, else its
    last words; as many as the gold has, plus 3) with explanatory phrases dropped, equal to the gold once both are
    normalised; ``accuracy``."""

    name = "CodeUEvaluator"

    @staticmethod
    def extract(pred: str, gold: str) -> str:
        n = len(gold.split()) + 3
        text = _code_text(pred)
        for phrase in ("will be", "of the code", "is", "would be", "the value of", "the result of", "printed"):
            text = text.replace(phrase, "")
        if "the final output" in text:
            return " ".join(re.split(r"\s+", text.split("the final output")[-1])[:n])
        return " ".join(re.split(r"\s+", text)[-n:])

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        correct, details = [], []
        for p, r in zip(predictions, references):
            got = self.extract(str(p), str(r))
            ok = normalize_answer(got) == normalize_answer(_code_text(str(r)))
            correct.append(ok)
            details.append({"pred": got, "answer": r, "correct": ok})
        return Scores({"accuracy": pct(sum(correct), len(correct))}, correct, details)


def _verdict(words: list[str], *, strict: bool) -> str:
    for w in words:
        w = w.lower().strip(".,;:!") if strict else w.lower()
        if (w == "true") if strict else ("true" in w):
            return "true"
        if (w == "false") if strict else ("false" in w):
            return "false"
    return "<error>"


class SciFiEvaluator(Evaluator):
    """AISBench's L-Eval sci-fi score, loyalty only: the reply's true/false before any ``[fact:`` part (a word that
    is exactly true/false first, else one containing it) against the first true/false word of the gold;
    ``accuracy``."""

    name = "SciFiEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        correct, details = [], []
        for p, r in zip(predictions, references):
            text = ("" if p is None else str(p)).lower()
            words = text.split("[fact:", 1)[0].split()
            pred = _verdict(words, strict=True)
            if pred == "<error>":
                pred = _verdict(words, strict=False)
            gold = _verdict(("" if r is None else str(r)).lower().split(), strict=False)
            ok = gold in ("true", "false") and pred == gold
            correct.append(ok)
            details.append({"pred": pred, "answer": gold, "correct": ok})
        return Scores({"accuracy": pct(sum(correct), len(correct))}, correct, details)


# -- the tables ---------------------------------------------------------------------------------------------------

LOADERS: dict[str, Any] = {cls: leval for cls in sorted(_WITH_LENGTH | _EXAMS)}

EVALUATORS: dict[str, type] = {
    "LEvalEMEvaluator": LEvalEMEvaluator,
    "ais_bench:LEvalEMEvaluator": AISLEvalEMEvaluator,
    "CodeUEvaluator": CodeUEvaluator,
    "SciFiEvaluator": SciFiEvaluator,
}

POSTPROCESSORS: dict[str, Any] = {
    "gsm100_postprocess": gsm100_postprocess,
    "gsm100_dataset_postprocess": gsm100_dataset_postprocess,
    "gsm100": gsm100_postprocess,
    "gsm100_dataset": gsm100_dataset_postprocess,
}
