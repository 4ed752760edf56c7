"""LV-Eval (five length levels, 16k to 256k words, with confusing facts and keyword-checked answers): its eleven
loaders and its F1 / ROUGE rules with the keyword recall gate and word blacklists, as OpenCompass defines them
(rewritten from their observable behaviour).

Data: the ``Infinigence/LVEval`` repository keeps one JSONL file per task and length, ``<task>/<task>_<length>.jsonl``
(``cmrc_mixup/cmrc_mixup_16k.jsonl``) once its per-task archives are unpacked; configs name the repository and the
file (``path='Infinigence/LVEval', name='cmrc_mixup_16k'``), read here without its loading script
(``data.loaders.hub_subsets``). Rows keep ``input``, ``context`` and ``answers``; the tasks with distractor facts
keep ``confusing_facts``; the tasks with answer keywords keep ``answer_keywords`` and append them to ``answers`` as
its last entry, where the keyword-gated scorers find them.

Scoring (``score`` is the mean ×100; only a row's *first* answer is scored, as the reference's loop stops there):
``LVEvalF1Evaluator`` (token F1; ``zh`` segments with jieba) as ``f1``; ``LVEvalOPTF1Evaluator`` (the same F1, 0
unless enough of the keywords, the last answer, appear in the reply: 20% of the English keyword tokens outside a
stop-word blacklist, 40% of the Chinese ones) as ``LVEval_f1``; ``LVEvalOPTRougeEvaluator`` (ROUGE-L F of the
``rouge`` package over blacklist-filtered tokens) as ``LVEval_rouge``.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, need, rows
from promptweave.data.loaders.hub_subsets import subset_records
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import BilingualEvaluator, check_lengths, need_package, pct
from promptweave.evaluate.postprocess import normalize_answer, normalize_zh_answer

_CONFUSING = frozenset({"LVEvalcmrcDataset", "LVEvalfactrecallenDataset", "LVEvalfactrecallzhDataset",
                        "LVEvalhotpotwikiqaDataset", "LVEvallicDataset", "LVEvalmultifieldqaenDataset",
                        "LVEvalmultifieldqazhDataset"})
_KEYWORDS = frozenset({"LVEvalhotpotwikiqaDataset", "LVEvallicDataset", "LVEvalmultifieldqaenDataset",
                       "LVEvalmultifieldqazhDataset", "LVEvallooglecrDataset", "LVEvallooglemirDataset",
                       "LVEvallooglesdDataset"})
_ALL = _CONFUSING | _KEYWORDS | {"LVEvaldureaderDataset"}
_LAYOUT = "Infinigence/LVEval's files: <folder>/<task>/<task>_<length>.jsonl (e.g. cmrc_mixup/cmrc_mixup_16k.jsonl)"


def _places(root: Path, name: str) -> list[Path]:
    f = f"{name}.jsonl"
    task = name.rsplit("_", 1)[0]
    return [root / task / f, root / f, root / "data" / f, root / "data" / task / f]


def lveval(ctx: LoadContext, path: str, name: str | None = None, data_files: Any = None) -> Splits:
    part = subset_records(ctx, path, name, _places, data_files=data_files, layout=_LAYOUT)
    confusing, keywords = ctx.loader in _CONFUSING, ctx.loader in _KEYWORDS
    keys = ("input", "context", "answers") + (("confusing_facts",) if confusing else ()) + (
        ("answer_keywords",) if keywords else ())
    items = []
    for i, rec in enumerate(part.rows):
        loc = part.locate(i)
        rec = need(ctx, rec, keys, file=Path(part.file), where=loc)
        answers = rec["answers"]
        if not isinstance(answers, list):
            raise ctx.fail("answers must be a list of accepted answers", file=part.file, where=f"{loc}.answers",
                           value=answers)
        row: dict[str, Any] = {"input": rec["input"], "context": rec["context"],
                               "answers": [*answers, rec["answer_keywords"]] if keywords else list(answers)}
        if confusing:
            row["confusing_facts"] = rec["confusing_facts"]
        if keywords:
            row["answer_keywords"] = rec["answer_keywords"]
        items.append((loc, row))
    return {"test": rows(items, part.file)}


# -- scoring ------------------------------------------------------------------------------------------------------

# words a keyword match does not count (the reference's lists)
STOP_EN = frozenset("""and to of in her was with for it from is that his he by she they or at because be on are their
what as had were about being this who but have has when which does""".split())
STOP_ZH = frozenset("""的 和 是 等 在 年 可以 为 与 ‰ 了 或 一种 月 c 至 日 有 进行 于 不 中 × 根据 小 由 亩 也 要 指 法 会 元 主要
以及 通过 首先 对 然后 号 以 所 后 丁 包括 无 将 用 能 形 方面 因素 位于 而 从 到 一定 用于 但 使用 让 具有 并 亿元 万元 上 类 基于 才 来 地 片
其他 个 或者 变得 时 给 你 使 条 受 已经 带 度""".split())


def _f1(pred: list[str], ref: list[str]) -> float:
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


class _LVEval(BilingualEvaluator):
    metric = "score"

    def zh_tokens(self, text: str, *, drop_empty: bool = True) -> list[str]:
        jieba = need_package("jieba", "metrics-zh", f"{self.name}(language='zh')")
        toks = [normalize_zh_answer(t) for t in jieba.cut(text, cut_all=False)]
        return [t for t in toks if t] if drop_empty else toks

    def row(self, pred: str, answers: list) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        per = []
        for p, r in zip(predictions, references):
            answers = list(r) if isinstance(r, (list, tuple)) else [r]
            per.append(self.row("" if p is None else str(p), answers) if answers else 0.0)
        return Scores({self.metric: pct(sum(per), len(per))}, [s >= 1.0 for s in per],
                      [{"pred": p, "answer": r, "score": s} for p, r, s in zip(predictions, references, per)])


class LVEvalF1Evaluator(_LVEval):
    name = "LVEvalF1Evaluator"
    metric = "f1"

    def row(self, pred, answers):
        ref = str(answers[0])
        if self.language == "en":
            return _f1(normalize_answer(pred).split(), normalize_answer(ref).split())
        return _f1(self.zh_tokens(pred), self.zh_tokens(ref))


class LVEvalOPTF1Evaluator(_LVEval):
    """F1 of the first answer, gated by the recall of the keywords (the last answer) in the reply's tokens."""

    name = "LVEvalOPTF1Evaluator"
    metric = "LVEval_f1"

    def row(self, pred, answers):
        keyword, ref = answers[-1], str(answers[0])
        if self.language == "en":
            pred_toks, ref_toks = normalize_answer(pred).split(), normalize_answer(ref).split()
            if keyword:
                kw = normalize_answer(str(keyword)).split()
                if self._recall(pred_toks, kw, STOP_EN) < 0.2:
                    return 0.0
        else:
            pred_toks, ref_toks = self.zh_tokens(pred), self.zh_tokens(ref)
            kw = self.zh_tokens(str(keyword) if keyword else ref)
            if self._recall(pred_toks, kw, STOP_ZH) < 0.4:
                return 0.0
        return _f1(pred_toks, ref_toks)

    @staticmethod
    def _recall(pred: list[str], keywords: list[str], stop: frozenset[str]) -> float:
        # no keyword tokens at all (only punctuation / articles): the reference divides by zero; no credit here
        if not keywords:
            return 0.0
        common = Counter(pred) & Counter(keywords)
        return sum(n for k, n in common.items() if k not in stop) / len(keywords)


class LVEvalOPTRougeEvaluator(_LVEval):
    """ROUGE-L F (``rouge`` package) of the first answer, blacklisted words dropped from both sides."""

    name = "LVEvalOPTRougeEvaluator"
    metric = "LVEval_rouge"
    requires: tuple[str, ...] = ("rouge",)

    def row(self, pred, answers):
        rouge = need_package("rouge", "metrics", self.name)
        ref = str(answers[0])
        if self.language == "zh":
            stop = STOP_ZH
            pred_toks, ref_toks = self.zh_tokens(pred, drop_empty=False), self.zh_tokens(ref, drop_empty=False)
        else:
            stop = STOP_EN
            pred_toks, ref_toks = normalize_answer(pred).split(), normalize_answer(ref).split()
        hyp = " ".join(t for t in pred_toks if t not in stop)
        gold = " ".join(t for t in ref_toks if t not in stop)
        try:
            return float(rouge.Rouge().get_scores([hyp], [gold], avg=True)["rouge-l"]["f"])
        except Exception:  # noqa: BLE001 - `rouge` raises on empty texts; the reference scores those 0
            return 0.0


LOADERS: dict[str, Any] = {cls: lveval for cls in sorted(_ALL)}

EVALUATORS: dict[str, type] = {
    "LVEvalF1Evaluator": LVEvalF1Evaluator,
    "LVEvalOPTF1Evaluator": LVEvalOPTF1Evaluator,
    "LVEvalOPTRougeEvaluator": LVEvalOPTRougeEvaluator,
}
