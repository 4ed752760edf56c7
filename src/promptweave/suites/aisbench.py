"""AISBench's own loaders, evaluators and postprocessors: the ones whose rules are not OpenCompass's under the same
name, and the ones only AISBench has (rewritten here from their observable behaviour; AISBench 3.1).

The tables map a reference name to ours. A key ``"<module prefix>:<name>"`` applies only to a class imported
from that module (AISBench has two ``MATHEvaluator``: ``datasets``' string rules, OpenCompass's too, and
``openicl.icl_evaluator``'s math-verify one); a plain key applies to any ``ais_bench`` import. The compat tables
take these under ``ais_bench:`` (``compat.origin``), so an OpenCompass config keeps OpenCompass's rules.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows
from promptweave.errors import EvaluationError
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator


def _check(predictions: Sequence[Any], references: Sequence[Any], name: str) -> None:
    if len(predictions) != len(references):
        raise EvaluationError(f"{name}: {len(predictions)} predictions but {len(references)} references",
                              field="evaluator", expected="one prediction per test row")


def _pct(n: float, total: int) -> float:
    return 100.0 * n / total if total else 0.0


# -- BBH ----------------------------------------------------------------------------------------------------------


def bbh_freeform_postprocess(text: str) -> str:
    """AISBench's: the text after the first ``answer is `` (case as written), its first line, a final ``.``
    dropped, a ``**bold**`` span taken; no yes/no or true/false case folding (OpenCompass's does more)."""
    ans = text
    parts = ans.split("answer is ")
    if len(parts) != 1:
        ans = parts[1].strip()
    ans = ans.split("\n")[0].strip()
    if ans.endswith("."):
        ans = ans[:-1].strip()
    m = re.search(r"\*\*(.*?)\*\*", ans)
    if m:
        return m.group(1)
    return ans


class BBHEvaluator(Evaluator):
    """AISBench's free-form BBH score: its :func:`bbh_freeform_postprocess` on the predictions only, then an exact,
    case-sensitive match with the gold (metric ``score``)."""

    name = "BBHEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        _check(predictions, references, self.name)
        correct, details = [], []
        for p, r in zip(predictions, references):
            pred = bbh_freeform_postprocess(str(p))
            ok = pred == r
            correct.append(ok)
            details.append({"pred": pred, "answer": r, "correct": ok})
        return Scores({"score": _pct(sum(correct), len(correct))}, correct, details)


# -- HumanEval -------------------------------------------------------------------------------------------------------

_FENCED = re.compile(r"```\w*\n(.*?)```", re.DOTALL)


def humaneval_postprocess_v2(text: str) -> str:
    """AISBench's: the first fenced code block (or the whole text) exactly as written. OpenCompass's strips the
    leading whitespace too, which breaks a reply that is the function's indented body (then run after the
    prompt's signature: it passes here and fails there)."""
    blocks = _FENCED.findall(text)
    return blocks[0] if blocks else text


def humaneval_postprocess_v3(text: str) -> str:
    """AISBench's: the last fenced code block (or the whole text) exactly as written (OpenCompass's: stripped)."""
    blocks = _FENCED.findall(text)
    return blocks[-1] if blocks else text


# -- MATH (openicl.icl_evaluator.MATHEvaluator: math-verify) ---------------------------------------------------


class MATHVerifyEvaluator(Evaluator):
    """AISBench's ``openicl`` ``MATHEvaluator``: the gold parsed as written first (LaTeX, then expression; wrapped
    in ``$...$`` only when that finds nothing), the answer parsed with boxed answers first, ``verify(answer,
    gold)``. A gold that does not parse counts in the denominator and leaves no detail, as AISBench's."""

    name = "MATHEvaluator"
    requires = (("math_verify", "math"),)

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        _check(predictions, references, self.name)
        try:
            import math_verify as mv
            from latex2sympy2_extended import NormalizationConfig
        except ImportError:
            raise EvaluationError("AISBench's MATHEvaluator needs the 'math_verify' package", field="evaluator.type",
                                  value=self.name, expected="pip install 'promptweave[math]'") from None
        gold_cfg = [mv.LatexExtractionConfig(), mv.ExprExtractionConfig()]
        ans_cfg = [mv.LatexExtractionConfig(
            normalization_config=NormalizationConfig(nits=False, malformed_operators=False, basic_latex=True,
                                                     equations=True, boxed="all", units=True),
            boxed_match_priority=0, try_extract_without_anchor=False)]
        hits = 0.0
        correct: list[bool | None] = []
        details: list[dict] = []
        for p, r in zip(predictions, references):
            try:
                gold = mv.parse(str(r), extraction_mode="first_match", extraction_config=gold_cfg)
                if not gold:
                    gold = mv.parse(f"${r}$", extraction_mode="first_match", extraction_config=gold_cfg)
                if not gold:
                    correct.append(False)
                    continue
                ans = mv.parse(str(p), extraction_config=ans_cfg, extraction_mode="first_match")
                ok = float(mv.verify(ans, gold))
            except Exception as exc:  # noqa: BLE001 - AISBench would stop scoring; one wrong row here instead
                correct.append(False)
                details.append({"pred": str(exc), "answer": str(r), "correct": False})
                continue
            hits += ok
            correct.append(bool(ok))
            details.append({"pred": str(ans), "answer": str(gold), "correct": bool(ok)})
        return Scores({"accuracy": _pct(hits, len(predictions))}, correct, details)


# -- GPQA -----------------------------------------------------------------------------------------------------------


def GPQA_Simple_Eval_postprocess(text: str) -> str | None:  # noqa: N802 - the reference's name
    """The letter after ``Answer:`` (any case, spaces around the colon), else None (then never correct)."""
    m = re.search(r"(?i)ANSWER\s*:\s*([A-D])", text)
    return m.group(1) if m else None


# -- MT-Bench -------------------------------------------------------------------------------------------------------


def mtbench(ctx: LoadContext, path: str) -> Splits:
    """MT-Bench questions JSONL: each row a conversation with ``question`` (the ``prompt`` turns), ``answer`` (the
    ``reference`` turns, or one empty string per turn) and ``id`` (``question_id``)."""
    f = ctx.find(path, local_mode=True)
    items = []
    for loc, line in jsonl(f):
        row = need(ctx, line, ("question_id", "prompt"), file=f, where=loc)
        turns = row["prompt"]
        if not isinstance(turns, list):
            raise ctx.fail("prompt must be a list of turns", file=f, where=loc, value=turns)
        refs = row.get("reference") or ""
        if refs and (not isinstance(refs, list) or len(refs) != len(turns)):
            raise ctx.fail("reference must list one answer per prompt turn", file=f, where=loc, value=refs)
        items.append((loc, {"question": turns, "answer": refs if refs else [""] * len(turns),
                            "id": row["question_id"]}))
    return rows(items, f)


_SOUNDS = {"A": "laughter", "B": "sigh", "C": "cough", "D": "throatclearing", "E": "sneeze", "F": "sniff"}


class MTBenchEvaluator(Evaluator):
    """AISBench's MT-Bench score: a reply longer than one character is replaced by the sound its first letter names
    (``A`` laughter ... ``F`` sniff; any other letter: empty), then compared with the gold as is (accuracy); the
    run hands it one reply and the list of golds per conversation (``scores_conversations``)."""

    name = "MTBenchEvaluator"
    # AISBench keeps one prediction per conversation (its first reply) and judges it against the conversation's
    # list of reference answers, so a reply never equals its gold (str vs list): the score is 0 whatever the
    # model says. Reproduced, as AISBench users compare with AISBench's numbers (README, AISBench parity).
    scores_conversations = True

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        _check(predictions, references, self.name)
        correct, details = [], []
        for p, r in zip(predictions, references):
            pred = p
            if pred is not None and len(pred) > 1:
                pred = _SOUNDS.get(pred[0], "")
            ok = pred == r
            correct.append(ok)
            details.append({"pred": p, "answer": r, "correct": ok})
        return Scores({"accuracy": _pct(sum(correct), len(correct))}, correct, details)


# -- TextVQA --------------------------------------------------------------------------------------------------------

_CONTRACTIONS = json.loads(
    '{"aint": "ain\'t", "arent": "aren\'t", "cant": "can\'t", "couldve": "could\'ve", "couldnt": "couldn\'t", '
    '"couldn\'tve": "couldn\'t\'ve", "couldnt\'ve": "couldn\'t\'ve", "didnt": "didn\'t", "doesnt": "doesn\'t", '
    '"dont": "don\'t", "hadnt": "hadn\'t", "hadnt\'ve": "hadn\'t\'ve", "hadn\'tve": "hadn\'t\'ve", '
    '"hasnt": "hasn\'t", "havent": "haven\'t", "hed": "he\'d", "hed\'ve": "he\'d\'ve", "he\'dve": "he\'d\'ve", '
    '"hes": "he\'s", "howd": "how\'d", "howll": "how\'ll", "hows": "how\'s", "Id\'ve": "I\'d\'ve", '
    '"I\'dve": "I\'d\'ve", "Im": "I\'m", "Ive": "I\'ve", "isnt": "isn\'t", "itd": "it\'d", '
    '"itd\'ve": "it\'d\'ve", "it\'dve": "it\'d\'ve", "itll": "it\'ll", "let\'s": "let\'s", "maam": "ma\'am", '
    '"mightnt": "mightn\'t", "mightnt\'ve": "mightn\'t\'ve", "mightn\'tve": "mightn\'t\'ve", '
    '"mightve": "might\'ve", "mustnt": "mustn\'t", "mustve": "must\'ve", "neednt": "needn\'t", '
    '"notve": "not\'ve", "oclock": "o\'clock", "oughtnt": "oughtn\'t", "ow\'s\'at": "\'ow\'s\'at", '
    '"\'ows\'at": "\'ow\'s\'at", "\'ow\'sat": "\'ow\'s\'at", "shant": "shan\'t", "shed\'ve": "she\'d\'ve", '
    '"she\'dve": "she\'d\'ve", "she\'s": "she\'s", "shouldve": "should\'ve", "shouldnt": "shouldn\'t", '
    '"shouldnt\'ve": "shouldn\'t\'ve", "shouldn\'tve": "shouldn\'t\'ve", "somebody\'d": "somebodyd", '
    '"somebodyd\'ve": "somebody\'d\'ve", "somebody\'dve": "somebody\'d\'ve", "somebodyll": "somebody\'ll", '
    '"somebodys": "somebody\'s", "someoned": "someone\'d", "someoned\'ve": "someone\'d\'ve", '
    '"someone\'dve": "someone\'d\'ve", "someonell": "someone\'ll", "someones": "someone\'s", '
    '"somethingd": "something\'d", "somethingd\'ve": "something\'d\'ve", "something\'dve": "something\'d\'ve", '
    '"somethingll": "something\'ll", "thats": "that\'s", "thered": "there\'d", "thered\'ve": "there\'d\'ve", '
    '"there\'dve": "there\'d\'ve", "therere": "there\'re", "theres": "there\'s", "theyd": "they\'d", '
    '"theyd\'ve": "they\'d\'ve", "they\'dve": "they\'d\'ve", "theyll": "they\'ll", "theyre": "they\'re", '
    '"theyve": "they\'ve", "twas": "\'twas", "wasnt": "wasn\'t", "wed\'ve": "we\'d\'ve", "we\'dve": "we\'d\'ve", '
    '"weve": "we\'ve", "werent": "weren\'t", "whatll": "what\'ll", "whatre": "what\'re", "whats": "what\'s", '
    '"whatve": "what\'ve", "whens": "when\'s", "whered": "where\'d", "wheres": "where\'s", '
    '"whereve": "where\'ve", "whod": "who\'d", "whod\'ve": "who\'d\'ve", "who\'dve": "who\'d\'ve", '
    '"wholl": "who\'ll", "whos": "who\'s", "whove": "who\'ve", "whyll": "why\'ll", "whyre": "why\'re", '
    '"whys": "why\'s", "wont": "won\'t", "wouldve": "would\'ve", "wouldnt": "wouldn\'t", '
    '"wouldnt\'ve": "wouldn\'t\'ve", "wouldn\'tve": "wouldn\'t\'ve", "yall": "y\'all", "yall\'ll": "y\'all\'ll", '
    '"y\'allll": "y\'all\'ll", "yall\'d\'ve": "y\'all\'d\'ve", "y\'alld\'ve": "y\'all\'d\'ve", '
    '"y\'all\'dve": "y\'all\'d\'ve", "youd": "you\'d", "youd\'ve": "you\'d\'ve", "you\'dve": "you\'d\'ve", '
    '"youll": "you\'ll", "youre": "you\'re", "youve": "you\'ve"}')
_NUMBERS = {"none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
            "seven": "7", "eight": "8", "nine": "9", "ten": "10"}
_ARTICLES = ("a", "an", "the")
_PUNCT = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",", "?", "!")
_PERIOD = re.compile(r"(?!<=\d)(\.)(?!\d)")
_COMMA_NUM = re.compile(r"(\d)(,)(\d)")
_SPECIAL = ("☞", "☟", "☜", "<unk>", "<|im_end|>", "<|endoftext|>")
_MAX_TEXT = 32768


def vqa_punctuation(text: str) -> str:
    """The VQA answer normalisation's punctuation step (as the reference: a mark next to a space, or any mark in a
    text with a ``1,000``-style number, is dropped; else it becomes a space; lone periods go)."""
    if len(text) > _MAX_TEXT:
        raise EvaluationError(f"a TextVQA answer is longer than {_MAX_TEXT} characters", field="evaluator")
    out = text
    for p in _PUNCT:
        if (p + " " in text or " " + p in text) or _COMMA_NUM.search(text):
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    # the reference passes re.UNICODE as sub's count (32): at most 32 periods are removed
    return _PERIOD.sub("", out, 32)


def vqa_digits_articles(text: str) -> str:
    if len(text) > _MAX_TEXT:
        raise EvaluationError(f"a TextVQA answer is longer than {_MAX_TEXT} characters", field="evaluator")
    words = [_NUMBERS.get(w, w) for w in text.lower().split()]
    words = [w for w in words if w not in _ARTICLES]
    return " ".join(_CONTRACTIONS.get(w, w) for w in words)


class TEXTEvaluator(Evaluator):
    """TextVQA accuracy (the VQA rule): the reply normalised (special tokens, punctuation, number words, articles,
    contractions); for each of the gold answers, min(1, matches among the *other* golds / 3); the row scores the
    mean of those. Golds are punctuation-normalised only when they disagree."""

    name = "TEXTEvaluator"

    def prepare(self, p: Any) -> str:
        return str(p)

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        _check(predictions, references, self.name)
        total = 0.0
        correct, details = [], []
        for p, golds in zip(predictions, references):
            text = self.prepare(p).replace("\n", " ").replace("\t", " ").strip()
            for tok in _SPECIAL:
                text = text.replace(tok, "")
            text = vqa_digits_articles(vqa_punctuation(text))
            answers = [dict(a) for a in golds]
            if len({a["answer"] for a in answers}) > 1:
                for a in answers:
                    a["answer"] = vqa_punctuation(a["answer"])
            accs = []
            for a in answers:
                others = [o for o in answers if o != a]
                accs.append(min(1.0, sum(1 for o in others if o["answer"] == text) / 3))
            row = sum(accs) / len(accs) if accs else 0.0
            total += row
            correct.append(row > 0.5)
            details.append({"pred": p, "answer": golds, "correct": row > 0.5})
        return Scores({"accuracy": _pct(total, len(predictions))}, correct, details)


class TEXTEvaluatorForGlm4v(TEXTEvaluator):
    """TextVQA for GLM-4V replies: the text inside ``<|begin_of_box|>...<|end_of_box|>`` when there is one."""

    name = "TEXTEvaluatorForGlm4v"

    def prepare(self, p: Any) -> str:
        m = re.search(r"<\|begin_of_box\|>(.*?)<\|end_of_box\|>", str(p))
        return m.group(1).strip() if m else str(p)


class TEXTEvaluatorForVita(TEXTEvaluator):
    """TextVQA for VITA replies: special tokens dropped, the text after the last pointing-hand mark, leading
    ``!`` / ``>`` / spaces dropped."""

    name = "TEXTEvaluatorForVita"

    def prepare(self, p: Any) -> str:
        if not isinstance(p, str):
            return ""
        text = p.replace("\n", " ").replace("\t", " ").strip()
        for tok in ("<|im_end|>", "<|end_of_box|>", "<|begin_of_box|>", "<unk>"):
            text = text.replace(tok, "")
        text = text.strip()
        for sep in ("☜", "☞", "☟"):
            if sep in text:
                text = text.split(sep)[-1].strip()
        return re.sub(r"^[!>\s]+", "", text).strip()


# -- the tables -----------------------------------------------------------------------------------------------------

_EVALUATORS: dict[str, type] = {
    "BBHEvaluator": BBHEvaluator,
    "ais_bench.benchmark.openicl:MATHEvaluator": MATHVerifyEvaluator,
    "MTBenchEvaluator": MTBenchEvaluator,
    "TEXTEvaluator": TEXTEvaluator,
    "TEXTEvaluatorForGlm4v": TEXTEvaluatorForGlm4v,
    "TEXTEvaluatorForVita": TEXTEvaluatorForVita,
}

_POSTPROCESSORS: dict[str, Any] = {
    "bbh_freeform_postprocess": bbh_freeform_postprocess,
    "bbh-freeform": bbh_freeform_postprocess,
    "GPQA_Simple_Eval_postprocess": GPQA_Simple_Eval_postprocess,
    "humaneval_postprocess_v2": humaneval_postprocess_v2,
    "humaneval_postprocess_v3": humaneval_postprocess_v3,
}

_LOADERS: dict[str, Any] = {
    "MTBenchDataset": mtbench,
}


def _as_suite(entries: dict[str, Any]) -> dict[str, Any]:
    """Each entry under ``ais_bench:<name>`` (AISBench's rule, chosen by the module a config imports it from:
    compat/origin.py), and under its plain name too: the compat registries look here only for a plain name their
    generic table lacks, so OpenCompass's rules keep the names both references define."""
    out = {(k if ":" in k else f"ais_bench:{k}"): v for k, v in entries.items()}
    out.update({k: v for k, v in entries.items() if ":" not in k})
    return out


EVALUATORS = _as_suite(_EVALUATORS)
POSTPROCESSORS = _as_suite(_POSTPROCESSORS)
LOADERS = _as_suite(_LOADERS)
