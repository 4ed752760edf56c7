"""IFEval (instruction following): its loader; and its scoring.

IFEval (instruction following), as AISBench's ``IFEvaluator`` scores it (each row's ``reference``
is its whole record, as the loader above gives it).

Each row lists instruction ids and their arguments; a reply *follows* an instruction when its rule holds. Strict:
the reply as given. Loose: any of eight variants (the reply, without its first line, without its last, without
both, and each of those with every ``*`` removed). An empty (blank) reply follows nothing. Metrics: the share of
rows following all their instructions, and of instructions followed, strict and loose (×100).

Three rules need more than the standard library, as in the reference: the language checks
(``language:response_language``, and ``change_case:english_capital`` / ``english_lowercase`` when the case test
passes) need ``langdetect``; ``length_constraints:number_sentences`` and ``change_case:capital_word_frequency``
need nltk with its punkt data. Without them a row that needs one is a typed error (PW640), never a guess.
An instruction argument missing from the data is a typed error too (the reference would draw one at random).
"""
from __future__ import annotations

from promptweave.data.loaders.base import LoadContext, Splits, jsonl, need, rows


def ifeval(ctx: LoadContext, path: str) -> Splits:
    """JSONL of instructions: ``prompt``, and the whole record as ``reference`` for the checker."""
    f = ctx.find(path)
    items = []
    for loc, tmp in jsonl(f):
        need(ctx, tmp, ("prompt",), file=f, where=loc)
        items.append((loc, {"prompt": tmp["prompt"], "reference": tmp}))
    return rows(items, f)


LOADERS = {
    "IFEvalDataset": ifeval,
}


# -- scoring --------------------------------------------------------------------------------------------------
import collections
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from promptweave.errors import EvaluationError, MissingExtraError
from promptweave.evaluate import safe_regex
from promptweave.evaluate.context import EvalContext, Scores
from promptweave.evaluate.evaluators import Evaluator

LESS, AT_LEAST = "less than", "at least"
YES_NO_MAYBE = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


def _need(args: Mapping[str, Any], *names: str) -> list[Any]:
    missing = [n for n in names if args.get(n) is None]
    if missing:
        raise EvaluationError("an IFEval instruction lacks an argument (the reference would draw one at random)",
                              field="evaluator", value=missing[0], expected=", ".join(names))
    return [args[n] for n in names]


def _compare(count: int, relation: Any, limit: Any) -> bool:
    if relation == LESS:
        return count < limit
    if relation == AT_LEAST:
        return count >= limit
    raise EvaluationError("unknown IFEval relation", field="evaluator", value=relation,
                          expected=f"{LESS!r} or {AT_LEAST!r}")


# -- optional packages ---------------------------------------------------------------------------------------------


def _detect_language(text: str) -> str | None:
    """langdetect's language code for ``text``; None when it cannot tell (the reference then counts it followed)."""
    try:
        import langdetect
    except ImportError:
        raise MissingExtraError("this IFEval instruction detects the reply's language, which needs langdetect",
                                field="evaluator", value="langdetect",
                                expected="pip install 'promptweave[ifeval]' (langdetect)") from None
    try:
        return langdetect.detect(text)
    except langdetect.LangDetectException:
        return None


def _punkt(what: str) -> Any:
    try:
        import nltk
    except ImportError:
        raise MissingExtraError(f"IFEval's {what} needs nltk", field="evaluator", value="nltk",
                                expected="pip install 'promptweave[ifeval]', then python -m nltk.downloader punkt "
                                         "punkt_tab") from None
    return nltk


def _count_sentences(text: str) -> int:
    nltk = _punkt("sentence count")
    try:
        tokenizer = nltk.data.load("nltk:tokenizers/punkt/english.pickle")
    except LookupError:
        raise MissingExtraError("IFEval's sentence count needs nltk's punkt data", field="evaluator", value="punkt",
                                expected="python -m nltk.downloader punkt") from None
    return len(tokenizer.tokenize(text))


def _word_tokens(text: str) -> list[str]:
    nltk = _punkt("capital word count")
    try:
        return list(nltk.word_tokenize(text))
    except LookupError:
        raise MissingExtraError("IFEval's capital word count needs nltk's punkt_tab data", field="evaluator",
                                value="punkt_tab", expected="python -m nltk.downloader punkt_tab") from None


_WORD = re.compile(r"\w+")


# -- the rules -----------------------------------------------------------------------------------------------------


def _keywords(s: str, a: Mapping[str, Any]) -> bool:
    (words,) = _need(a, "keywords")
    return all(safe_regex.search(w, s, re.IGNORECASE, where="kwargs.keywords") for w in words)


def _keyword_frequency(s: str, a: Mapping[str, Any]) -> bool:
    kw, freq, rel = _need(a, "keyword", "frequency", "relation")
    return _compare(len(safe_regex.findall(kw.strip(), s, re.IGNORECASE, where="kwargs.keyword")), rel, freq)


def _forbidden(s: str, a: Mapping[str, Any]) -> bool:
    (words,) = _need(a, "forbidden_words")
    return not any(safe_regex.search(r"\b" + w + r"\b", s, re.IGNORECASE, where="kwargs.forbidden_words")
                   for w in set(words))


def _letter_frequency(s: str, a: Mapping[str, Any]) -> bool:
    letter, freq, rel = _need(a, "letter", "let_frequency", "let_relation")
    letter = str(letter).strip()
    if len(letter) != 1 or not "a" <= letter.lower() <= "z":
        raise EvaluationError("IFEval's letter_frequency needs one ASCII letter", field="evaluator", value=letter)
    count = collections.Counter(s.lower())[letter.lower()]
    return count < freq if rel == LESS else count >= freq  # the reference: anything but 'less than' is 'at least'


def _language(s: str, a: Mapping[str, Any]) -> bool:
    (lang,) = _need(a, "language")
    got = _detect_language(s)
    return True if got is None else got == lang


def _sentences(s: str, a: Mapping[str, Any]) -> bool:
    n, rel = _need(a, "num_sentences", "relation")
    return _compare(_count_sentences(s), rel, n)


def _paragraphs(s: str, a: Mapping[str, Any]) -> bool:
    (n,) = _need(a, "num_paragraphs")
    parts = re.split(r"\s?\*\*\*\s?", s)
    count = len(parts)
    for i, p in enumerate(parts):
        if not p.strip():
            if i in (0, len(parts) - 1):
                count -= 1
            else:
                return False
    return count == n


def _words(s: str, a: Mapping[str, Any]) -> bool:
    n, rel = _need(a, "num_words", "relation")
    return _compare(len(_WORD.findall(s)), rel, n)


def _nth_paragraph_first_word(s: str, a: Mapping[str, Any]) -> bool:
    n, nth, first = _need(a, "num_paragraphs", "nth_paragraph", "first_word")
    paras = s.split("\n\n")
    count = len(paras) - sum(1 for p in paras if not p.strip())
    if not (0 < nth <= count):
        return False
    para = paras[nth - 1].strip()
    if not para:
        return False
    word = para.split()[0].strip().lstrip("'").lstrip('"')
    got = ""
    for ch in word:
        if ch in ".,?!'\"":
            break
        got += ch.lower()
    return count == n and got == str(first).lower()


def _placeholders(s: str, a: Mapping[str, Any]) -> bool:
    (n,) = _need(a, "num_placeholders")
    return len(re.findall(r"\[.*?\]", s)) >= n


def _postscript(s: str, a: Mapping[str, Any]) -> bool:
    (marker,) = _need(a, "postscript_marker")
    marker = str(marker).strip()
    low = s.lower()
    if marker == "P.P.S":
        return bool(re.findall(r"\s*p\.\s?p\.\s?s.*$", low, flags=re.MULTILINE))
    if marker == "P.S.":
        return bool(re.findall(r"\s*p\.\s?s\..*$", low, flags=re.MULTILINE))
    return bool(safe_regex.findall(r"\s*" + marker.lower() + r".*$", low, re.MULTILINE,
                                   where="kwargs.postscript_marker"))


def _bullets(s: str, a: Mapping[str, Any]) -> bool:
    (n,) = _need(a, "num_bullets")
    stars = re.findall(r"^\s*\*[^\*].*$", s, flags=re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", s, flags=re.MULTILINE)
    return len(stars) + len(dashes) == n


def _constrained(s: str, a: Mapping[str, Any]) -> bool:
    s = s.strip()
    return any(opt in s for opt in YES_NO_MAYBE)


def highlighted_sections(s: str) -> int:
    """``*highlighted*`` and ``**highlighted**`` sections with text in them (PMMEval's MIFEval counts them alike)."""
    single = [h for h in re.findall(r"\*[^\n\*]*\*", s) if h.strip("*").strip()]
    double = [h for h in re.findall(r"\*\*[^\n\*]*\*\*", s) if h[2:-2].strip()]
    return len(single) + len(double)


def _highlights(s: str, a: Mapping[str, Any]) -> bool:
    (n,) = _need(a, "num_highlights")
    return highlighted_sections(s) >= n


def _sections(s: str, a: Mapping[str, Any]) -> bool:
    splitter, n = _need(a, "section_spliter", "num_sections")
    parts = safe_regex.compile_pattern(r"\s?" + str(splitter).strip() + r"\s?\d+\s?",
                                       where="kwargs.section_spliter").split(s)
    return len(parts) - 1 >= n


def _json(s: str, a: Mapping[str, Any]) -> bool:
    return is_json_reply(s)


def is_json_reply(s: str) -> bool:
    """The reply is JSON, once a Markdown code fence around it is taken off."""
    v = s.strip()
    for prefix in ("```json", "```Json", "```JSON", "```"):
        v = v.removeprefix(prefix)
    v = v.removesuffix("```").strip()
    try:
        json.loads(v)
    except ValueError:
        return False
    return True


def _title(s: str, a: Mapping[str, Any]) -> bool:
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", s))


def _two_responses(s: str, a: Mapping[str, Any]) -> bool:
    return two_different_responses(s)


def two_different_responses(s: str) -> bool:
    """Exactly two non-empty responses separated by ``******``, and not the same."""
    parts = s.split("******")
    kept = []
    for i, part in enumerate(parts):
        if part.strip():
            kept.append(part)
        elif i not in (0, len(parts) - 1):
            return False
    return len(kept) == 2 and kept[0].strip() != kept[1].strip()


def _repeat_prompt(s: str, a: Mapping[str, Any]) -> bool:
    (prompt,) = _need(a, "prompt_to_repeat")
    return s.strip().lower().startswith(str(prompt).strip().lower())


def _end(s: str, a: Mapping[str, Any]) -> bool:
    (phrase,) = _need(a, "end_phrase")
    return s.strip().strip('"').lower().endswith(str(phrase).strip().lower())


def _capital_word_frequency(s: str, a: Mapping[str, Any]) -> bool:
    freq, rel = _need(a, "capital_frequency", "capital_relation")
    count = sum(1 for w in _word_tokens(s) if w.isupper())
    return count < freq if rel == LESS else count >= freq


def _english_capital(s: str, a: Mapping[str, Any]) -> bool:
    if not s.isupper():
        return False
    got = _detect_language(s)
    return True if got is None else got == "en"


def _english_lowercase(s: str, a: Mapping[str, Any]) -> bool:
    if not s.islower():
        return False
    got = _detect_language(s)
    return True if got is None else got == "en"


def _no_comma(s: str, a: Mapping[str, Any]) -> bool:
    return "," not in s


def _quotation(s: str, a: Mapping[str, Any]) -> bool:
    s = s.strip()
    return len(s) > 1 and s[0] == '"' and s[-1] == '"'


RULES: dict[str, Callable[[str, Mapping[str, Any]], bool]] = {
    "keywords:existence": _keywords,
    "keywords:frequency": _keyword_frequency,
    "keywords:forbidden_words": _forbidden,
    "keywords:letter_frequency": _letter_frequency,
    "language:response_language": _language,
    "length_constraints:number_sentences": _sentences,
    "length_constraints:number_paragraphs": _paragraphs,
    "length_constraints:number_words": _words,
    "length_constraints:nth_paragraph_first_word": _nth_paragraph_first_word,
    "detectable_content:number_placeholders": _placeholders,
    "detectable_content:postscript": _postscript,
    "detectable_format:number_bullet_lists": _bullets,
    "detectable_format:constrained_response": _constrained,
    "detectable_format:number_highlighted_sections": _highlights,
    "detectable_format:multiple_sections": _sections,
    "detectable_format:json_format": _json,
    "detectable_format:title": _title,
    "combination:two_responses": _two_responses,
    "combination:repeat_prompt": _repeat_prompt,
    "startend:end_checker": _end,
    "change_case:capital_word_frequency": _capital_word_frequency,
    "change_case:english_capital": _english_capital,
    "change_case:english_lowercase": _english_lowercase,
    "punctuation:no_comma": _no_comma,
    "startend:quotation": _quotation,
}
"""Instruction id -> its rule ``(reply, arguments) -> followed``."""


def loose_variants(reply: str) -> list[str]:
    lines = reply.split("\n")
    first = "\n".join(lines[1:]).strip()
    last = "\n".join(lines[:-1]).strip()
    both = "\n".join(lines[1:-1]).strip()
    return [reply, reply.replace("*", ""), first, last, both, first.replace("*", ""), last.replace("*", ""),
            both.replace("*", "")]


def follows(reply: str, ids: Sequence[str], kwargs: Sequence[Mapping[str, Any]], *,
            loose: bool) -> list[bool]:
    """Per instruction: followed by the reply (strict) or by one of its loose variants."""
    out = []
    candidates = loose_variants(reply) if loose else [reply]
    for i, iid in enumerate(ids):
        rule = RULES.get(iid)
        if rule is None:
            raise EvaluationError("unknown IFEval instruction", field="evaluator", value=iid,
                                  expected=", ".join(RULES))
        args = {k: v for k, v in dict(kwargs[i] if i < len(kwargs) and kwargs[i] else {}).items() if v is not None}
        out.append(any(c.strip() and rule(c, args) for c in candidates))
    return out


class IFEvaluator(Evaluator):
    """AISBench's IFEval score: prompt- and instruction-level accuracy, strict and loose."""

    name = "IFEvaluator"

    def score(self, predictions, references, ctx: EvalContext | None = None) -> Scores:
        if len(predictions) != len(references):
            raise EvaluationError(f"{self.name}: {len(predictions)} predictions but {len(references)} references",
                                  field="evaluator", expected="one prediction per test row")
        prompts = list(ctx.prompts) if ctx is not None and ctx.prompts is not None else []
        p_strict = p_loose = i_strict = i_loose = i_total = 0
        correct: list[bool | None] = []
        details: list[dict] = []
        for n, (pred, ref) in enumerate(zip(predictions, references)):
            if not isinstance(ref, Mapping) or not isinstance(ref.get("instruction_id_list"), list):
                raise EvaluationError(f"{self.name} needs each gold as the IFEval record (instruction_id_list, "
                                      "kwargs, prompt)", field="evaluator", value=type(ref).__name__,
                                      expected="IFEvalDataset's 'reference' column")
            reply = "" if pred is None else str(pred)
            ids, kwargs = ref["instruction_id_list"], list(ref.get("kwargs") or [])
            strict, loose = follows(reply, ids, kwargs, loose=False), follows(reply, ids, kwargs, loose=True)
            s_ok, l_ok = all(strict), all(loose)
            p_strict += s_ok
            p_loose += l_ok
            i_strict += sum(strict)
            i_loose += sum(loose)
            i_total += len(ids)
            correct.append(s_ok)
            details.append({"prompt": prompts[n] if n < len(prompts) else None, "pred": pred, "refer": ref,
                            "is_strict_correct": s_ok, "is_loose_correct": l_ok, "is_correct": s_ok,
                            "grade": "strict" if s_ok else "loose" if l_ok else "none"})
        rows = len(correct)
        if not rows or not i_total:
            raise EvaluationError(f"{self.name} has no rows (or no instructions) to score", field="evaluator")
        metrics = {"Prompt-level-strict-accuracy": p_strict / rows * 100,
                   "Inst-level-strict-accuracy": i_strict / i_total * 100,
                   "Prompt-level-loose-accuracy": p_loose / rows * 100,
                   "Inst-level-loose-accuracy": i_loose / i_total * 100}
        return Scores(metrics, correct, details)


# AISBench's class (OpenCompass's IFEvaluator has other rules: its configs keep the reference's, or its own)
EVALUATORS = {"ais_bench:IFEvaluator": IFEvaluator}
