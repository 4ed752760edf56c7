"""Rule-based evaluators: the references' scoring rules and metric names, reimplemented.

Every evaluator has ``score(predictions, references, ctx=None) -> Scores``. Metrics are percentages where the
reference reports percentages; ``Scores.correct`` is the per-row verdict (``None`` for corpus metrics).
A length mismatch is an :class:`EvaluationError` (the reference raises before scoring); no rows score 0.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate import math_equiv
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.postprocess import (
    general_postprocess,
)


def check_lengths(predictions: Sequence[Any], references: Sequence[Any] | None, name: str) -> None:
    if references is not None and len(predictions) != len(references):
        raise EvaluationError(f"{name}: {len(predictions)} predictions but {len(references)} references",
                              field="evaluator", expected="one prediction per test row")


def pct(n: float, total: int) -> float:
    return 100.0 * n / total if total else 0.0


class Evaluator:
    """Base: subclasses set ``needs`` (``rows``, ``judge``, ``code``) so planning can check them early."""

    needs: frozenset[str] = frozenset()
    name = "Evaluator"

    def __init__(self, **kwargs: Any) -> None:
        if kwargs:
            raise EvaluationError(f"{self.name} takes no argument {min(kwargs)!r}",
                                  field=f"evaluator.{min(kwargs)}")

    def score(self, predictions: Sequence[Any], references: Sequence[Any],
              ctx: EvalContext | None = None) -> Scores:  # pragma: no cover - abstract
        raise NotImplementedError


class RowEvaluator(Evaluator):
    """Accuracy-like: a per-row verdict, ``metric = 100 * correct / rows``, details with pred/answer/correct."""

    metric = "accuracy"

    def judge_row(self, pred: Any, ref: Any) -> tuple[bool, dict]:  # pragma: no cover - abstract
        raise NotImplementedError

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        correct, details = [], []
        for p, r in zip(predictions, references):
            ok, detail = self.judge_row(p, r)
            correct.append(bool(ok))
            details.append({**detail, "correct": bool(ok)})
        return Scores({self.metric: pct(sum(correct), len(correct))}, correct, details)


class AccEvaluator(RowEvaluator):
    """Accuracy: prediction and gold compared as text (``str(pred) == str(gold)``), as the reference's label map."""

    name = "AccEvaluator"

    def judge_row(self, pred, ref):
        return str(pred) == str(ref), {"pred": pred, "answer": ref}

    def score(self, predictions, references, ctx=None) -> Scores:
        s = super().score(predictions, references, ctx)
        s.details = None  # the reference reports no details for plain accuracy
        return s


class PPLAccEvaluator(AccEvaluator):
    name = "PPLAccEvaluator"


class AccwithDetailsEvaluator(RowEvaluator):
    """Accuracy with the prompt in each detail; compares values as they are (``pred == ref``)."""

    name = "AccwithDetailsEvaluator"

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        prompts = list(ctx.prompts) if ctx is not None and ctx.prompts is not None else [None] * len(predictions)
        correct, details = [], []
        for i, (p, r) in enumerate(zip(predictions, references)):
            ok = p == r
            correct.append(bool(ok))
            details.append({"prompt": prompts[i] if i < len(prompts) else None, "pred": p, "refr": r,
                            "is_correct": bool(ok)})
        return Scores({"accuracy": pct(sum(correct), len(correct))}, correct, details)


class EMEvaluator(RowEvaluator):
    """Exact match after ``general_postprocess``; a reference is a list of accepted answers."""

    name = "EMEvaluator"
    metric = "score"

    def judge_row(self, pred, ref):
        refs = list(ref) if isinstance(ref, (list, tuple)) else [ref]  # a bare string: one answer, not its chars
        p = general_postprocess(pred)
        processed = [general_postprocess(x) for x in refs]
        return (p in processed or p in refs), {"pred": p, "answer": sorted(set(processed + refs), key=str)}


class MATHEvaluator(RowEvaluator):
    """MATH equivalence (``version='v1'`` or ``'v2'`` normalisation)."""

    name = "MATHEvaluator"

    def __init__(self, version: str = "v1", pred_postprocessor: Any = None, **kw: Any) -> None:
        super().__init__(**kw)
        if version not in ("v1", "v2"):
            raise EvaluationError("unknown MATHEvaluator version", field="evaluator.version", value=version,
                                  expected="'v1' or 'v2'")
        self.version = version
        self.pred_postprocessor = pred_postprocessor

    def judge_row(self, pred, ref):
        return math_equiv.is_equiv(pred, ref, self.version), {"pred": pred, "answer": ref}


class OpenQA(RowEvaluator):
    """TriviaQA / NQ: the first line of the answer, lower-cased and normalised, contains a gold answer."""

    metric = "score"

    def clean(self, prediction: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def judge_row(self, pred, ref):
        p = self.clean(str(pred))
        refs = list(ref) if isinstance(ref, (list, tuple)) else [ref]
        cands = [general_postprocess(str(j)).lower() for j in refs]
        return any(c in p for c in cands), {"pred": p, "answer": cands}


class CircularEvaluator(Evaluator):
    """CircularEval: each question asked under 4 rotations of its options; gold is ``index--answer--pattern``.

    ``acc_4``/``acc_1`` (rotations ABCD..DABC / the original order only), ``more_{i}_{j}`` (share of questions
    right in at least j of i), ``perf_{i}``, majority ``vote_{i}`` and the ``prior_X`` answer distribution.
    """

    name = "CircularEvaluator"
    cp4 = ("ABCD", "BCDA", "CDAB", "DABC")
    cp1 = ("ABCD",)

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        n = len(predictions)
        m: dict[str, float] = {"acc_4": 0, "acc_1": 0}
        parsed = []
        for pred, reference in zip(predictions, references):
            parts = str(reference).split("--")
            if len(parts) != 3:
                raise EvaluationError("CircularEvaluator needs golds like '12--B--BCDA' (a circular dataset)",
                                      field="evaluator", value=reference)
            parsed.append((pred, *parts))
        hits: dict[int, dict[str, list[bool]]] = {4: {}, 1: {}}
        for pred, index, ref, pat in parsed:
            hits[4].setdefault(index, [])
            hits[1].setdefault(index, [])
            if pat in self.cp4:
                m["acc_4"] += pred == ref
                hits[4][index].append(pred == ref)
            if pat in self.cp1:
                m["acc_1"] += pred == ref
                hits[1][index].append(pred == ref)
        for k, size in (("acc_4", 4), ("acc_1", 1)):
            m[k] = m[k] / n * 4 / size * 100 if n else 0.0
        for i in (1, 4):
            for j in range(i + 1):
                groups = hits[i]
                m[f"more_{i}_{j}"] = pct(sum(sum(v) >= j for v in groups.values()), len(groups))
        for i in (1, 4):
            m[f"perf_{i}"] = m[f"more_{i}_{i}"]
        votes: dict[str, dict[str, Counter]] = {"vote_4": {}, "vote_1": {}}
        golds: dict[str, str] = {}
        for pred, index, ref, pat in parsed:
            back = dict(zip("ABCD", pat))
            ref = back.get(ref, ref)
            pred = back[pred] if pred in ("A", "B", "C", "D") else "-"
            if index not in votes["vote_4"]:
                votes["vote_4"][index] = Counter()
                votes["vote_1"][index] = Counter()
                golds[index] = ref
            if pat in self.cp4:
                votes["vote_4"][index][pred] += 1
            if pat in self.cp1:
                votes["vote_1"][index][pred] += 1
        for k in ("vote_4", "vote_1"):
            ok = sum(1 for idx, c in votes[k].items() if c and golds[idx] == c.most_common(1)[0][0])
            m[k] = pct(ok, len(votes[k]))
        prior = Counter(p if p in ("A", "B", "C", "D") else "-" for p in predictions)
        for k in ("A", "B", "C", "D", "-"):
            m[f"prior_{k}"] = pct(prior[k], n)
        return Scores(m, [p == r for p, _i, r, _pat in parsed])


# -- text overlap ------------------------------------------------------------------------------------------------


def _with_seed(fn):
    """The reference seeds ``random``/``numpy`` with 0 around HF metrics (ROUGE's bootstrap); same here."""
    import random

    import numpy as np

    state, np_state = random.getstate(), np.random.get_state()
    random.seed(0)
    np.random.seed(0)
    try:
        return fn()
    finally:
        random.setstate(state)
        np.random.set_state(np_state)


def need_package(module: str, extra: str, who: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise EvaluationError(f"{who} needs the {module!r} package", field="evaluator.type", value=who,
                              expected=f"pip install 'promptweave[{extra}]'") from None


class RougeEvaluator(Evaluator):
    """ROUGE-1/2/L/Lsum F-measure ×100, aggregated like Hugging Face ``evaluate``'s ``rouge`` (bootstrap median)."""

    name = "RougeEvaluator"
    requires: tuple[str, ...] = ("rouge_score",)  # checked at plan time (promptweave.extras)
    types = ("rouge1", "rouge2", "rougeL", "rougeLsum")

    def __init__(self, pred_postprocessor: Any = None, **kw: Any) -> None:
        super().__init__(**kw)

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        rs = need_package("rouge_score.rouge_scorer", "metrics", self.name)
        scoring = need_package("rouge_score.scoring", "metrics", self.name)
        scorer = rs.RougeScorer(list(self.types), use_stemmer=False)

        def run() -> dict[str, float]:
            agg = scoring.BootstrapAggregator()
            for p, r in zip(predictions, references):
                if isinstance(r, (list, tuple)):
                    agg.add_scores(scorer.score_multi(list(map(str, r)), str(p)))
                else:
                    agg.add_scores(scorer.score(str(r), str(p)))
            if not predictions:
                return {k: 0.0 for k in self.types}
            res = agg.aggregate()
            return {k: float(res[k].mid.fmeasure) * 100 for k in self.types}

        return Scores(_with_seed(run), [None] * len(predictions))


class BleuEvaluator(Evaluator):
    """Corpus BLEU from ``sacrebleu`` (13a tokenizer, exp smoothing), as Hugging Face ``evaluate``'s ``sacrebleu``."""

    name = "BleuEvaluator"
    requires: tuple[str, ...] = ("sacrebleu",)
    tokenize: str | None = None

    def __init__(self, pred_postprocessor: Any = None, **kw: Any) -> None:
        super().__init__(**kw)

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        sb = need_package("sacrebleu", "metrics", self.name)
        refs = [list(r) if isinstance(r, (list, tuple)) else [r] for r in references]
        width = len(refs[0]) if refs else 1
        if any(len(r) != width for r in refs):
            raise EvaluationError("BLEU needs the same number of references for every row", field="evaluator")
        streams = [[str(r[i]) for r in refs] for i in range(width)]
        kw = {"tokenize": self.tokenize} if self.tokenize else {}
        out = sb.corpus_bleu([str(p) for p in predictions], streams, smooth_method="exp", **kw)
        metrics = {"score": float(out.score), "bp": float(out.bp), "sys_len": float(out.sys_len),
                   "ref_len": float(out.ref_len)}
        extra = {"counts": list(out.counts), "totals": list(out.totals), "precisions": list(out.precisions)}
        return Scores(metrics, [None] * len(predictions), extra=extra)


# -- LongBench ---------------------------------------------------------------------------------------------------


class BilingualEvaluator(Evaluator):
    """An evaluator of English or Chinese answers (``language``); Chinese ones are segmented with jieba, so a
    ``language='zh'`` instance requires it (checked at plan time)."""

    def __init__(self, language: str = "en", **kw: Any) -> None:
        super().__init__(**kw)
        if language not in ("en", "zh"):
            raise EvaluationError(f"{self.name}: unknown language", field="evaluator.language", value=language,
                                  expected="'en' or 'zh'")
        self.language = language
        if language == "zh":
            self.requires = (*getattr(type(self), "requires", ()), "jieba")


class JiebaRougeEvaluator(Evaluator):
    """Chinese ROUGE-1/2/L (×100): ``general_postprocess``, jieba segmentation, the ``rouge`` package's F."""

    name = "JiebaRougeEvaluator"
    requires: tuple[str, ...] = ("rouge", "jieba")

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        rouge = need_package("rouge", "metrics", self.name)
        jieba = need_package("jieba", "metrics-zh", self.name)
        preds = [" ".join(jieba.cut(general_postprocess(str(p)))) or "__PREDPLACEHOLDER__" for p in predictions]
        refs = [" ".join(jieba.cut(general_postprocess(str(r)))) or "__REFRPLACEHOLDER__" for r in references]
        if not preds:
            return Scores({"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}, [])
        sc = rouge.Rouge().get_scores(preds, refs, avg=True)
        return Scores({"rouge1": sc["rouge-1"]["f"] * 100, "rouge2": sc["rouge-2"]["f"] * 100,
                       "rougeL": sc["rouge-l"]["f"] * 100}, [None] * len(preds))


class AveragePPLEvaluator(Evaluator):
    """The mean of the predictions (perplexities)."""

    name = "AveragePPLEvaluator"

    def score(self, predictions, references, ctx=None) -> Scores:
        vals = [float(p) for p in predictions]
        return Scores({"average_ppl": sum(vals) / len(vals) if vals else 0.0}, [None] * len(vals))


class MATHVerifyEvaluator(Evaluator):
    """Symbolic equivalence with Hugging Face's ``math-verify`` (gold parsed as ``$ref$``; a gold that does not
    parse is skipped but still counted in the denominator, as the reference does)."""

    name = "MATHVerifyEvaluator"
    requires: tuple[str, ...] = ("math_verify",)

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        mv = need_package("math_verify", "math", self.name)
        from latex2sympy2_extended import NormalizationConfig

        correct: list[bool | None] = []
        details = []
        hits = 0.0
        for p, r in zip(predictions, references):
            try:
                gold = mv.parse(f"${r}$", extraction_mode="first_match",
                                extraction_config=[mv.LatexExtractionConfig(), mv.ExprExtractionConfig()])
                if not gold:
                    correct.append(False)
                    continue
                ans = mv.parse(str(p), extraction_mode="first_match", extraction_config=[mv.LatexExtractionConfig(
                    normalization_config=NormalizationConfig(nits=False, malformed_operators=False, basic_latex=True,
                                                             equations=True, boxed="all", units=True),
                    boxed_match_priority=0, try_extract_without_anchor=False)])
                ok = float(mv.verify(gold, ans))
            except Exception as exc:  # noqa: BLE001 - a failed parse is a wrong answer, as upstream
                correct.append(False)
                details.append({"pred": str(exc), "answer": r, "correct": False})
                continue
            hits += ok
            correct.append(bool(ok))
            details.append({"pred": str(ans), "answer": str(gold), "correct": bool(ok)})
        return Scores({"accuracy": pct(hits, len(predictions))}, correct, details)


# -- NeedleBench / BABILong (long-context retrieval) -------------------------------------------------------------


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a):
        cur = [i + 1]
        for j, cb in enumerate(b):
            cur.append(min(prev[j + 1] + 1, cur[j] + 1, prev[j] + (ca != cb)))
        prev = cur
    return prev[-1]
