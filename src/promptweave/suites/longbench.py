"""LongBench (THUDM/LongBench): its loader (OpenCompass's ``LongBench<name>Dataset`` classes, one JSONL file per
subset) and its scoring rules (``LongBench*Evaluator``).

OpenCompass opens the folder with ``datasets.load_dataset(path, name=...)``, which runs the folder's own
``LongBench.py`` loading script (``trust_remote_code``); here nothing of the folder runs: the subset's rows are
read from ``<path>/data/<name>.jsonl`` (the layout of the dataset's ``data.zip``, extracted), else
``<path>/<name>.jsonl``. Each row keeps the columns the reference class keeps: ``input`` (when the subset has a
question), ``context`` and ``answers``; the classification subsets (``trec``, ``lsht``) put ``answers`` and
``all_classes`` together under ``all_labels``. Only a ``test`` split, as the reference returns.
"""
from __future__ import annotations

import difflib
import re
from collections import Counter
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.errors import EvaluationError
from promptweave.evaluate.context import Scores
from promptweave.evaluate.evaluators import BilingualEvaluator, check_lengths, need_package, pct
from promptweave.evaluate.postprocess import normalize_answer

# subsets whose rows have no question: ``input`` is dropped, as the reference's class drops it
NO_INPUT = frozenset({"gov_report", "lcc", "multi_news", "passage_count", "vcsum"})
CLASSIFICATION = frozenset({"trec", "lsht"})
# the reference's class names -> the subset each reads by default (its configs pass ``name=`` as well)
CLASSES = {
    "LongBench2wikimqaDataset": "2wikimqa", "LongBenchdureaderDataset": "dureader",
    "LongBenchgov_reportDataset": "gov_report", "LongBenchhotpotqaDataset": "hotpotqa",
    "LongBenchlccDataset": "lcc", "LongBenchlshtDataset": "lsht", "LongBenchmulti_newsDataset": "multi_news",
    "LongBenchmultifieldqa_enDataset": "multifieldqa_en", "LongBenchmultifieldqa_zhDataset": "multifieldqa_zh",
    "LongBenchmusiqueDataset": "musique", "LongBenchnarrativeqaDataset": "narrativeqa",
    "LongBenchpassage_countDataset": "passage_count",
    "LongBenchpassage_retrieval_enDataset": "passage_retrieval_en",
    "LongBenchpassage_retrieval_zhDataset": "passage_retrieval_zh", "LongBenchqasperDataset": "qasper",
    "LongBenchqmsumDataset": "qmsum", "LongBenchrepobenchDataset": "repobench-p",
    "LongBenchsamsumDataset": "samsum", "LongBenchtrecDataset": "trec", "LongBenchtriviaqaDataset": "triviaqa",
    "LongBenchvcsumDataset": "vcsum",
}


def _kind(loader: str) -> str:
    """The reference class's column rule (by its name, not by the subset a config passes)."""
    sub = CLASSES.get(loader, "")
    if sub in CLASSIFICATION:
        return "classification"
    return "context" if sub in NO_INPUT else "qa"


def longbench(ctx: LoadContext, path: str, name: str) -> Splits:
    root = ctx.find(path)
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ctx.fail("name must be a LongBench subset such as 'qasper'", where="name", value=name)
    candidates = [root / "data" / f"{name}.jsonl", root / f"{name}.jsonl"] if root.is_dir() else [root]
    f: Path | None = next((c for c in candidates if c.is_file()), None)
    if f is None:
        f = ctx.member(root, "data", f"{name}.jsonl")  # the typed "no such file" error, naming the layout
    kind = _kind(ctx.loader)
    keys = {"qa": ("input", "context", "answers"), "context": ("context", "answers"),
            "classification": ("input", "context", "answers", "all_classes")}[kind]
    items = []
    for loc, item in jsonl(f):
        item = need(ctx, item, keys, file=f, where=loc)
        if kind == "classification":
            row = {"input": item["input"], "context": item["context"],
                   "all_labels": {"answers": item["answers"], "all_classes": item["all_classes"]}}
        else:
            row = {k: item[k] for k in keys}
        items.append((loc, row))
    return {"test": rows(items, f)}


__all__ = ["CLASSES", "longbench"]


class _LongBench(BilingualEvaluator):
    """A per-row score in [0, 1] (best over the row's references), reported as ``score`` ×100."""

    def row(self, pred: str, refs: Any) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def score(self, predictions, references, ctx=None) -> Scores:
        check_lengths(predictions, references, self.name)
        per = [self.row(str(p), r) for p, r in zip(predictions, references)]
        return Scores({"score": pct(sum(per), len(per))}, [s >= 1.0 for s in per],
                      [{"pred": p, "score": s} for p, s in zip(predictions, per)])


def _token_f1(pred: list[str], ref: list[str]) -> float:
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


def _as_list(refs: Any) -> list:
    return list(refs) if isinstance(refs, (list, tuple)) else [refs]


class LongBenchF1Evaluator(_LongBench):
    name = "LongBenchF1Evaluator"

    def row(self, pred, refs):
        if self.language != "en":
            need_package("jieba", "metrics-zh", f"{self.name}(language='zh')")
            import jieba

            from promptweave.evaluate.postprocess import normalize_zh_answer

            def toks(s: str) -> list[str]:
                return [t for t in (normalize_zh_answer(x) for x in jieba.cut(s, cut_all=False)) if t]
        else:
            def toks(s: str) -> list[str]:
                return normalize_answer(s).split()
        return max([_token_f1(toks(pred), toks(str(r))) for r in _as_list(refs)] + [0.0])


class LongBenchRetrievalEvaluator(_LongBench):
    name = "LongBenchRetrievalEvaluator"

    def row(self, pred, refs):
        total = 0.0
        for ref in _as_list(refs):
            ids = re.findall(r"Paragraph (\d+)" if self.language == "en" else r"段落(\d+)", str(ref))
            if not ids:
                continue  # the reference would raise IndexError here
            numbers = re.findall(r"\d+", pred)
            total += 0.0 if not numbers else sum(n == ids[0] for n in numbers) / len(numbers)
        return total


class LongBenchCountEvaluator(_LongBench):
    name = "LongBenchCountEvaluator"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)

    def row(self, pred, refs):
        total = 0.0
        for ref in _as_list(refs):
            numbers = re.findall(r"\d+", pred)
            total += 0.0 if not numbers else sum(n == str(ref) for n in numbers) / len(numbers)
        return total


class LongBenchClassificationEvaluator(_LongBench):
    name = "LongBenchClassificationEvaluator"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)

    def row(self, pred, refs):
        if not isinstance(refs, dict) or "answers" not in refs or "all_classes" not in refs:
            raise EvaluationError("LongBenchClassificationEvaluator needs golds {'answers': [...], "
                                  "'all_classes': [...]}", field="evaluator", value=refs)
        total = 0.0
        for ref in refs["answers"]:
            matched = [c for c in refs["all_classes"] if c in pred]
            # the reference removes from the list it iterates, which skips the element after each removal
            i = 0
            while i < len(matched):
                term = matched[i]
                if term in ref and term != ref:
                    matched.remove(term)
                    i += 1
                    continue
                i += 1
            if ref in matched:  # the reference's "!= 0" test is always true, so the similarity branch never runs
                total += 1.0 / len(matched)
        return total


class LongBenchRougeEvaluator(_LongBench):
    """ROUGE-L F of the ``rouge`` package (as the reference), best over the references; ``zh`` segments with jieba."""

    name = "LongBenchRougeEvaluator"
    requires: tuple[str, ...] = ("rouge",)

    def row(self, pred, refs):
        rouge = need_package("rouge", "metrics", self.name)
        best = 0.0
        for ref in _as_list(refs):
            ref = str(ref)
            if self.language == "zh":
                jieba = need_package("jieba", "metrics-zh", f"{self.name}(language='zh')")
                # the reference re-segments the already segmented prediction for every reference; same here
                pred = " ".join(jieba.cut(pred, cut_all=False))
                ref = " ".join(jieba.cut(ref, cut_all=False))
            try:
                cur = rouge.Rouge().get_scores([pred], [ref], avg=True)["rouge-l"]["f"]
            except Exception:  # noqa: BLE001 - empty hypotheses raise in `rouge`; the reference scores them 0
                cur = 0.0
            best = max(best, cur)
        return best


class LongBenchCodeSimEvaluator(_LongBench):
    """Similarity of the first code line (no backticks or comments) to the reference, as ``fuzz.ratio``."""

    name = "LongBenchCodeSimEvaluator"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)

    def row(self, pred, refs):
        best = 0.0
        for ref in _as_list(refs):
            line = ""
            for cand in pred.lstrip("\n").split("\n"):
                if "`" not in cand and "#" not in cand and "//" not in cand:
                    line = cand
                    break
            pred = line  # the reference overwrites the prediction inside its loop; kept for equal scores
            ratio = difflib.SequenceMatcher(None, line, str(ref)).ratio()
            best = max(best, round(ratio * 100) / 100)
        return best


LOADERS: dict[str, Any] = {cls: longbench for cls in CLASSES}

EVALUATORS: dict[str, type] = {
    "LongBenchF1Evaluator": LongBenchF1Evaluator,
    "LongBenchRougeEvaluator": LongBenchRougeEvaluator,
    "LongBenchCodeSimEvaluator": LongBenchCodeSimEvaluator,
    "LongBenchClassificationEvaluator": LongBenchClassificationEvaluator,
    "LongBenchRetrievalEvaluator": LongBenchRetrievalEvaluator,
    "LongBenchCountEvaluator": LongBenchCountEvaluator,
}
