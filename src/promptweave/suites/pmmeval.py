"""P-MMEval (multilingual): the reference's evaluators for its eight tasks, reimplemented.

Most P-MMEval postprocessors do not change the reply: they pair it with the dataset's language
(``(reply, lang)``), because the evaluators read language-specific answer phrases. A pair read back from a
prediction file is a list; both forms are accepted.

- choice tasks (MHellaswag, MLogiQA, MMMLU, XNLI): a JSON-ish ``"answer": "X"`` (last one wins), else the letter
  after the language's "the answer is" phrase, else (the fuzzy fallback) the first of A, B, C, D in the reply;
  ``accuracy`` ×100 rounded to 2. MHellaswag/MLogiQA golds are option indices (0 = A).
- MGSM: the last number of the reply (thousands commas dropped) equals the gold as text.
- Flores: per row, the contiguous run of reply lines with the best sentence BLEU against the gold, after
  language-aware tokenisation; the chosen rows' n-gram statistics are pooled into one corpus ``BLEU`` (sacrebleu).
- MIFEval: multilingual instruction following; ``strict_acc`` / ``loose_acc`` over the rows' instruction lists.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from promptweave.errors import EvaluationError
from promptweave.evaluate import safe_regex
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator, check_lengths, need_package
from promptweave.evaluate.extras import note_missing
from promptweave.suites.ifeval import highlighted_sections, is_json_reply, two_different_responses

# -- postprocessors -----------------------------------------------------------------------------------------------


def pmmeval_lang_postprocess(text: str, lang_code: str) -> tuple[str, str]:
    """The reply with its language code, for the choice tasks and MIFEval."""
    return text, lang_code


def pmmeval_flores_postprocess(text: str, lang_fullname: str) -> tuple[str, str]:
    return text, lang_fullname


def _pair(pred: Any, who: str) -> tuple[str, str]:
    if isinstance(pred, (list, tuple)) and len(pred) == 2:
        return ("" if pred[0] is None else str(pred[0])), str(pred[1])
    raise EvaluationError(f"{who} scores (reply, language) pairs; the dataset's pred_postprocessor makes them",
                          field="evaluator", value=pred,
                          expected="eval_cfg.pred_postprocessor=dict(type=pmmeval_..._postprocess, lang_code=...)")


# -- choice tasks -------------------------------------------------------------------------------------------------

_ANSWER_IS = {
    "fr": ("La réponse est", "la réponse est"), "en": ("the answer is", "The answer is"),
    "vi": ("Câu trả lời là", "câu trả lời là"), "ar": ("الجواب هو",), "th": ("คำตอบคือ",), "zh": ("答案是",),
    "ko": ("답변은",), "pt": ("A resposta é",), "ja": ("答えは",), "es": ("La respuesta es",),
}
# XNLI adds Indonesian; MMMLU keys the same phrases by locale
_ANSWER_IS_XNLI = {**_ANSWER_IS, "id": ("Jawaban adalah", "jawaban adalah")}
_LOCALES = {"FR-FR": "fr", "EN-US": "en", "VI-VT": "vi", "AR-XY": "ar", "TH-TL": "th", "ZH-CN": "zh", "KO-KR": "ko",
            "PT-BR": "pt", "JA-JP": "ja", "ES-LA": "es"}
_ANSWER_IS_MMMLU = {loc: _ANSWER_IS[code] for loc, code in _LOCALES.items()}

_JSON_ANSWER = (
    re.compile(r"\{\s*?\"answer\"\s*?\:\s*?\"?(A|B|C|D).*?\"?\s*?\}", re.DOTALL),
    re.compile(r"\{\s*?['\"]answer['\"]\s*?\:\s*?['\"](A|B|C|D).*?['\"]\s*?\}", re.DOTALL),
    re.compile(r"\"answer\"\s*:\s*\"?(A|B|C|D)\"?", re.DOTALL),
    re.compile(r"['\"]answer['\"]\s*:\s*['\"](A|B|C|D)['\"]", re.DOTALL),
)


def extract_choice(reply: str, lang: str, phrases: Mapping[str, Sequence[str]] = _ANSWER_IS) -> str | None:
    """The strict reading: an ``"answer": "X"`` field, else the letter right after the first of the language's
    answer phrases found in the reply (case as written; A-D or a-d), else None."""
    for pattern in _JSON_ANSWER:
        found = pattern.findall(reply)
        if found:
            return found[-1]
    if lang not in phrases:
        raise EvaluationError("P-MMEval has no answer phrase for this language", field="pred_postprocessor.lang_code",
                              value=lang, expected=", ".join(phrases))
    for phrase in phrases[lang]:
        if phrase in reply and phrase != reply:
            rest = reply.split(phrase)[-1].strip()
            letter = rest[0] if rest else None
            return letter if letter is not None and letter in "ABCDabcd" else None
    return None


def extract_choice_fuzzy(reply: str) -> str | None:
    """The first of A, B, C, D (in that order of preference) that occurs anywhere in the reply."""
    return next((o for o in "ABCD" if o in reply), None)


class _PMMEvalChoice(Evaluator):
    phrases: Mapping[str, Sequence[str]] = _ANSWER_IS

    def gold_letter(self, ref: Any) -> str:
        return str(ref)

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        ok, details = [], []
        for pred, ref in zip(predictions, references):
            reply, lang = _pair(pred, self.name)
            strict = extract_choice(reply, lang, self.phrases)
            choice = strict if strict is not None else extract_choice_fuzzy(reply)
            gold = self.gold_letter(ref)
            hit = choice is not None and choice.lower() == gold.lower()
            ok.append(hit)
            details.append({"acc": float(hit), "failed": float(strict is None),
                            "failed_strict": float(choice is None), "extracted_answer": choice, "answer": gold})
        acc = round(sum(ok) / len(ok) * 100, 2) if ok else 0.0
        return Scores({"accuracy": acc}, ok, details)


class _IndexGold(_PMMEvalChoice):
    def gold_letter(self, ref: Any) -> str:
        try:
            return chr(int(ref) + 65)
        except (TypeError, ValueError):
            raise EvaluationError(f"{self.name} golds are option indices (0 = A)", field="evaluator",
                                  value=ref) from None


class PMMEvalMHellaswagEvaluator(_IndexGold):
    name = "PMMEvalMHellaswagEvaluator"


class PMMEvalMLogiQAEvaluator(_IndexGold):
    """As the reference meant it: the reference passes its failed strict result (None) to the fuzzy fallback,
    which crashes; the fallback here reads the reply, as the other choice tasks do."""

    name = "PMMEvalMLogiQAEvaluator"


class PMMEvalMMMLUEvaluator(_PMMEvalChoice):
    name = "PMMEvalMMMLUEvaluator"
    phrases = _ANSWER_IS_MMMLU


class PMMEvalXNLIEvaluator(_PMMEvalChoice):
    name = "PMMEvalXNLIEvaluator"
    phrases = _ANSWER_IS_XNLI


# -- MGSM ---------------------------------------------------------------------------------------------------------

_LAST_NUMBER = re.compile(r"([+-])?(?=([0-9]|\.[0-9]))(0|([1-9](\d{0,2}(,\d{3})*)|\d*))?(\.\d*)?(?=\D|$)")


def last_number(text: str) -> str | None:
    """The last number written in ``text`` (a sign '+' and thousands commas dropped, a trailing '.' stripped)."""
    found = list(_LAST_NUMBER.finditer(text))
    if not found:
        return None
    return found[-1].group().replace(",", "").replace("+", "").strip().strip(".")


class PMMEvalMGSMEvaluator(Evaluator):
    name = "PMMEvalMGSMEvaluator"

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        ok, details = [], []
        for pred, ref in zip(predictions, references):
            reply = pred[0] if isinstance(pred, (list, tuple)) and pred else pred
            got = last_number("" if reply is None else str(reply))
            gold = str(ref).replace(",", "")
            ok.append(got == gold)
            details.append({"references": gold, "predictions": reply, "extracted": got, "correct": got == gold})
        acc = round(sum(ok) / len(ok) * 100, 2) if ok else 0.0
        return Scores({"accuracy": acc}, ok, details)


# -- Flores (translation) ------------------------------------------------------------------------------------------

_CJK_OR_THAI = re.compile("([\u2e80-\u9fff]|[\ua960-\ua97f]|[\uac00-\ud7ff]|[\u0E00-\u0E7F])")


def _spaced_scripts(sent: str) -> str:
    """Japanese, Korean and Thai: every CJK/Hangul/Thai character its own token."""
    out = "".join(f" {ch} " if _CJK_OR_THAI.match(ch) else ch for ch in sent.strip())
    return " ".join(out.strip().split())


def flores_tokenize(sent: str, lang: str) -> str:
    """Language pre-tokenisation (sacrebleu's zh tokenizer; per-character for ja/ko/th; whitespace otherwise),
    then sacrebleu's 13a."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    if lang == "Chinese":
        from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

        pre = TokenizerZh()(sent)
    elif lang in ("Japanese", "Korean", "Thai"):
        pre = _spaced_scripts(sent)
    else:
        pre = " ".join(sent.strip().split())
    return Tokenizer13a()(pre)


def _lines(text: str) -> list[str]:
    return [x.strip() for x in text.strip().split("\n") if x.strip()]


def best_line_bleu(reply: str, gold: str, lang: str) -> Any:
    """The sentence BLEU (effective order) of the best contiguous run of reply lines (first best kept)."""
    from sacrebleu.metrics import BLEU

    scorer = BLEU(tokenize="13a", effective_order=True)
    ref = flores_tokenize("\n".join(_lines(gold)), lang)
    toks = [flores_tokenize(line, lang) for line in _lines(reply)]
    best = None
    for i in range(len(toks)):
        for j in range(i, len(toks)):
            s = scorer.sentence_score(" ".join(toks[i:j + 1]), [ref])
            if best is None or s.score > best.score:
                best = s
    return best if best is not None else scorer.sentence_score("", [ref])


class PMMEvalFloresEvaluator(Evaluator):
    name = "PMMEvalFloresEvaluator"
    requires = (("sacrebleu", "metrics"),)

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        note_missing(self)

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        check_lengths(predictions, references, self.name)
        need_package("sacrebleu", "metrics", self.name)
        from sacrebleu.metrics import BLEU

        rows = []
        for pred, ref in zip(predictions, references):
            reply, lang = _pair(pred, self.name)
            rows.append(best_line_bleu(reply, str(ref), lang))
        if not rows:
            return Scores({"BLEU": 0.0}, [])
        counts = [sum(x.counts[n] for x in rows) for n in range(4)]
        totals = [sum(x.totals[n] for x in rows) for n in range(4)]
        pooled = BLEU.compute_bleu(correct=counts, total=totals, sys_len=sum(x.sys_len for x in rows),
                                   ref_len=sum(x.ref_len for x in rows))
        details = [{"bleu": x.score} for x in rows]
        return Scores({"BLEU": round(pooled.score, 2)}, [None] * len(rows), details)


# -- MIFEval (multilingual instruction following) ------------------------------------------------------------------

_YES_NO_MAYBE = {
    "ar": ("إجابتي هي نعم.", "إجابتي هي لا.", "إجابتي هي ربما."),
    "es": ("Mi respuesta es sí.", "Mi respuesta es no.", "Mi respuesta es tal vez."),
    "fr": ("Ma réponse est oui.", "Ma réponse est non.", "Ma réponse est peut-être."),
    "ja": ("私の答えははいです。", "私の答えはいいえです。", "私の答えはたぶんです。"),
    "ko": ("제 대답은 예입니다.", "제 대답은 아닙니다.", "제 대답은 아마도입니다."),
    "pt": ("Minha resposta é sim.", "Minha resposta é não.", "Minha resposta é talvez."),
    "th": ("คำตอบของฉันคือใช่", "คำตอบของฉันคือไม่", "คำตอบของฉันคืออาจจะ"),
    "vi": ("Câu trả lời của tôi là có.", "Câu trả lời của tôi là không.", "Câu trả lời của tôi là có thể."),
    "en": ("My answer is yes.", "My answer is no.", "My answer is maybe."),
    "zh": ("我的答案是是。", "我的答案是否。", "我的答案是不确定。"),
}
_COMMAS = {"ar": "[\u060C]", "es": "[,\uFF0C]", "fr": "[,\u2026]", "ja": "[,\u3001]", "ko": "[,]", "pt": "[,\uFF0C]",
           "th": "[\u0E25]", "vi": "[,\uFF0C]", "en": "[,]", "zh": "[,，]"}
_SPACE_SEPARATED = ("en", "es", "fr", "in", "pt", "ru", "vi")


def _lang_table(table: Mapping[str, Any], lang: str, what: str) -> Any:
    if lang not in table:
        raise EvaluationError(f"MIFEval's {what} check has no rule for this language",
                              field="pred_postprocessor.lang_code", value=lang, expected=", ".join(table))
    return table[lang]


def _two_responses(s: str, **_: Any) -> bool:
    return two_different_responses(s)


def _highlights(s: str, num_highlights: int, **_: Any) -> bool:
    return highlighted_sections(s) >= num_highlights


def _json_format(s: str, **_: Any) -> bool:
    return is_json_reply(s)


def _postscript(s: str, postscript_marker: str, **_: Any) -> bool:
    # the marker comes from the data and is used as a pattern (as the reference does), so it runs time-limited
    return bool(safe_regex.findall(r"\s*" + postscript_marker.lower() + r".*$", s.lower(), re.MULTILINE,
                                   where="kwargs.postscript_marker"))


def _paragraphs(s: str, sep: str) -> list[str]:
    return [p.strip() for p in re.split(sep, s) if p.strip()]


def _nth_paragraph(s: str, num_paragraphs: int, nth_paragraph: int, **_: Any) -> bool:
    # the reference blanks the expected first word before comparing, so only the paragraph count matters
    paras = _paragraphs(s, r"\n\n")
    return len(paras) >= num_paragraphs and len(paras) >= nth_paragraph


def _relation(count: int, relation: str, limit: int) -> bool:
    if relation == "less than":
        return count <= limit
    if relation == "at least":
        return count >= limit
    return False  # the reference falls through (None): not followed


def _sentences(s: str, relation: str, num_sentences: int, **_: Any) -> bool:
    return _relation(len([x for x in (y.strip() for y in s.strip().split("\n")) if x]), relation, num_sentences)


def _words(s: str, relation: str, num_words: int, lang_code: str, **_: Any) -> bool:
    n = len(s.split()) if lang_code in _SPACE_SEPARATED else len("".join(s.split()))
    return _relation(n, relation, num_words)


def _quotation(s: str, lang_code: str, **_: Any) -> bool:
    s = s.strip()
    return ((s.startswith('"') and s.endswith('"'))
            or (lang_code in ("ar", "es", "fr", "pt", "ru") and s.startswith("«") and s.endswith("»"))
            or (lang_code in ("ar", "es", "fr", "ko", "pt", "th", "vi", "zh") and s.startswith("“")
                and s.endswith("”"))
            or (lang_code == "ja" and s.startswith("『") and s.endswith("』")))


# instruction id -> (check(input_string, **kwargs), takes the language)
MIFEVAL_CHECKS: dict[str, tuple[Callable[..., bool], bool]] = {
    "combination:repeat_prompt": (
        lambda s, prompt_to_repeat, **_: s.strip().lower().startswith(prompt_to_repeat.strip().lower()), False),
    "combination:two_responses": (_two_responses, False),
    "detectable_content:number_placeholders": (
        lambda s, num_placeholders, **_: len(re.findall(r"\[.*?\]", s)) >= num_placeholders, False),
    "detectable_content:postscript": (_postscript, False),
    "detectable_format:constrained_response": (
        lambda s, lang_code, **_: any(r in s for r in _lang_table(_YES_NO_MAYBE, lang_code, "constrained_response")),
        True),
    "detectable_format:json_format": (_json_format, False),
    "detectable_format:number_bullet_lists": (
        lambda s, num_bullets, **_: len(re.findall(r"^\s*\*[^\*].*$", s, flags=re.MULTILINE))
        + len(re.findall(r"^\s*-.*$", s, flags=re.MULTILINE)) == num_bullets, False),
    "detectable_format:number_highlighted_sections": (_highlights, False),
    "detectable_format:title": (
        lambda s, **_: any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", s)), False),
    "keywords:forbidden_words": (lambda s, forbidden_words, **_: not any(w in s for w in forbidden_words), False),
    "length_constraints:nth_paragraph_first_word": (_nth_paragraph, True),
    "length_constraints:number_paragraphs": (
        lambda s, num_paragraphs, **_: len(_paragraphs(s, r"\s?\*\*\*\s?")) == num_paragraphs, False),
    "length_constraints:number_sentences": (_sentences, True),
    "length_constraints:number_words": (_words, True),
    "punctuation:no_comma": (
        lambda s, lang_code, **_: not re.search(_lang_table(_COMMAS, lang_code, "no_comma"), s), True),
    "startend:end_checker": (lambda s, end_phrase, **_: s.strip().endswith(end_phrase), False),
    "startend:quotation": (_quotation, True),
}


def _instruction_args(row: Mapping[str, Any], lang: str, takes_lang: bool, keep_none: bool) -> dict[str, Any]:
    args: dict[str, Any] = {"lang_code": lang} if takes_lang else {}
    kwargs = row.get("kwargs") or []
    for part in kwargs if isinstance(kwargs, list) else [kwargs]:
        for k, v in (part or {}).items():
            if v is not None or keep_none:
                args[k] = v
    return args


def _follows(row: Mapping[str, Any], reply: str, lang: str, *, loose: bool) -> bool:
    """Every instruction of the row followed by a non-empty reply. The reference's loose mode builds variants of
    the reply (first/last line dropped, '*' removed) but then checks the reply itself for each, so it differs
    from strict only in keeping ``None`` arguments; same here."""
    ids = row.get("instruction_id_list")
    if not isinstance(ids, list):
        raise EvaluationError("MIFEval rows need an 'instruction_id_list' column", field="evaluator", value=ids)
    non_empty = bool(reply.strip())
    for iid in ids:
        if iid not in MIFEVAL_CHECKS:
            raise EvaluationError("unknown MIFEval instruction", field="evaluator", value=iid,
                                  expected=", ".join(MIFEVAL_CHECKS))
        check, takes_lang = MIFEVAL_CHECKS[iid]
        try:
            followed = non_empty and bool(check(reply, **_instruction_args(row, lang, takes_lang, loose)))
        except TypeError as exc:
            if loose:  # a kept None argument (a column filled for another instruction) fails the reference too
                return False
            raise EvaluationError(f"MIFEval instruction {iid} got unusable arguments ({exc})", field="evaluator",
                                  value=row.get("kwargs")) from None
        if not followed:
            return False
    return True


class PMMEvalMIFEvalEvaluator(Evaluator):
    """``strict_acc`` / ``loose_acc``: the share (×100, 2 places) of rows following all their instructions."""

    name = "PMMEvalMIFEvalEvaluator"
    needs = frozenset({"rows"})

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        rows = list(ctx.rows) if ctx is not None else []
        if len(rows) != len(predictions):
            raise EvaluationError(f"{self.name} needs the test rows (instruction lists) for every prediction",
                                  field="evaluator")
        strict, loose, details = [], [], []
        for pred, row in zip(predictions, rows):
            reply, lang = _pair(pred, self.name)
            s, lo = _follows(row, reply, lang, loose=False), _follows(row, reply, lang, loose=True)
            strict.append(s)
            loose.append(lo)
            details.append({"strict_acc": float(s), "loose_acc": float(lo)})
        n = len(strict)
        metrics = {"strict_acc": round(sum(strict) / n * 100, 2) if n else 0.0,
                   "loose_acc": round(sum(loose) / n * 100, 2) if n else 0.0}
        return Scores(metrics, strict, details)


# -- HumanEval-XL (code, scored by the user's code evaluation service) ---------------------------------------------

_PROGRAM_LANGUAGES = {"java": "Java", "javascript": "JavaScript", "js": "JavaScript", "python": "Python"}


class PMMEvalHumanEvalXLEvaluator(Evaluator):
    """Completions cleaned per language and sent to OpenCompass's code evaluation service (``ip_address``,
    ``port``); the service's metrics are reported as it gives them. Needs ``--allow-code-exec``."""

    name = "PMMEvalHumanEvalXLEvaluator"
    needs = frozenset({"code"})

    def __init__(self, language: str, ip_address: str = "localhost", text_language: str = "", port: Any = "",
                 retry: int = 2, timeout: float = 600, **kw: Any) -> None:
        super().__init__(**kw)
        if language not in _PROGRAM_LANGUAGES:
            raise EvaluationError("unknown HumanEval-XL programming language", field="evaluator.language",
                                  value=language, expected=", ".join(_PROGRAM_LANGUAGES))
        self.language, self.text_language = language, text_language
        self.ip_address, self.port, self.retry, self.timeout = ip_address, port, retry, timeout

    def score(self, predictions: Any, references: Any, ctx: EvalContext | None = None) -> Scores:
        from promptweave.evaluate.code_exec import require_flag
        from promptweave.evaluate.code_service import clean_up_code, evaluate_remote, service_url

        check_lengths(predictions, references, self.name)
        require_flag(ctx, self.name)
        title = _PROGRAM_LANGUAGES[self.language]
        lines = [{"task_id": f"{title}/{i}", "generation": clean_up_code("" if p is None else str(p),
                                                                         self.language, str(r))}
                 for i, (p, r) in enumerate(zip(predictions, references))]
        out = evaluate_remote(service_url(self.ip_address, self.port), f"humanevalx/{self.language}",
                              f"humanevalx_{self.language}_{self.text_language}.json", lines,
                              timeout=self.timeout, retry=self.retry)
        metrics = {k: float(v) for k, v in out.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        extra = {k: v for k, v in out.items() if k not in metrics}
        return Scores(metrics, [None] * len(lines), [{"generation": x["generation"]} for x in lines], extra)


# the suite's entries in the compat registries (compat/suites.py)
EVALUATORS: dict[str, type] = {
    "PMMEvalFloresEvaluator": PMMEvalFloresEvaluator,
    "PMMEvalHumanEvalXLEvaluator": PMMEvalHumanEvalXLEvaluator,
    "PMMEvalMGSMEvaluator": PMMEvalMGSMEvaluator,
    "PMMEvalMHellaswagEvaluator": PMMEvalMHellaswagEvaluator,
    "PMMEvalMIFEvalEvaluator": PMMEvalMIFEvalEvaluator,
    "PMMEvalMLogiQAEvaluator": PMMEvalMLogiQAEvaluator,
    "PMMEvalMMMLUEvaluator": PMMEvalMMMLUEvaluator,
    "PMMEvalXNLIEvaluator": PMMEvalXNLIEvaluator,
}
POSTPROCESSORS = {
    "pmmeval_flores_postprocess": pmmeval_flores_postprocess,
    "pmmeval_flores": pmmeval_flores_postprocess,
    **{f"pmmeval_{task}{suffix}": pmmeval_lang_postprocess
       for task in ("mhellaswag", "mlogiqa", "mmmlu", "xnli", "mifeval") for suffix in ("_postprocess", "")},
}


# -- loaders: <path>/<task>/test/<lang>.jsonl (MMMLU: mmmlu/<easy|hard>/test/mmlu_<lang>.jsonl) --------------------


def _task_rows(ctx: Any, path: str, *parts: str) -> Any:
    from promptweave.data.loaders.base import jsonl, need
    from promptweave.data.loaders.classify import table

    f = ctx.member(ctx.find(path), *parts)
    return table(((loc, need(ctx, r, (), file=f, where=loc)) for loc, r in jsonl(f)), f)


def _one_task(task: str) -> Callable[..., Any]:
    def load(ctx: Any, path: str, lang: str) -> Any:
        return _task_rows(ctx, path, task, "test", f"{lang}.jsonl")

    load.__doc__ = f"P-MMEval {task}: ``<path>/{task}/test/<lang>.jsonl``."
    return load


def pmmeval_flores(ctx: Any, path: str, lang_fullname: str) -> Any:
    """P-MMEval Flores: ``<path>/flores/test/<lang_fullname>.jsonl``."""
    return _task_rows(ctx, path, "flores", "test", f"{lang_fullname}.jsonl")


def pmmeval_humanevalxl(ctx: Any, path: str, lang: str, program_lang: str) -> Any:
    """P-MMEval HumanEval-XL: ``<path>/humaneval-xl/test/<program_lang>/<lang>.jsonl``."""
    return _task_rows(ctx, path, "humaneval-xl", "test", program_lang, f"{lang}.jsonl")


def pmmeval_mmmlu(ctx: Any, path: str, lang: str, difficulty: str) -> Any:
    """P-MMEval MMMLU: the easy and/or hard file (``difficulty`` easy / hard / all, easy rows first)."""
    from promptweave.data.loaders.classify import table

    if difficulty not in ("easy", "hard", "all"):
        raise ctx.fail("difficulty must be 'easy', 'hard' or 'all'", where="difficulty", value=difficulty)
    parts = [_task_rows(ctx, path, "mmmlu", level, "test", f"mmlu_{lang}.jsonl")
             for level in ("easy", "hard") if difficulty in (level, "all")]
    items = [(f"{p.file} {p.locate(i)}", r) for p in parts for i, r in enumerate(p.rows)]
    return table(items, parts[0].file)


LOADERS: dict[str, Callable[..., Any]] = {
    "PMMEvalFloresDataset": pmmeval_flores,
    "PMMEvalHumanEvalXLDataset": pmmeval_humanevalxl,
    "PMMEvalMMMLUDataset": pmmeval_mmmlu,
    **{f"PMMEval{name}Dataset": _one_task(task) for name, task in (
        ("MGSM", "mgsm"), ("MHellaswag", "mhellaswag"), ("MIFEval", "mifeval"), ("MLogiQA", "mlogiqa"),
        ("XNLI", "xnli"))},
}
